// The budget column of the Cost table of docs/cost.md, in a module of its own: the result type
// (result.ts) and the rows that print a budget (flow.ts, worker-bundle.ts) all read it, and none
// of them has to import another for it.
export const BUDGETS = {
  commandsPerJob: 15,
  commandsPerJobAim: 12,
  bytesPerWaitingJob: 400,
  idleCommandsPerTick: 2,
  waitCommandsPerSecond: 1,
  /** A wait's first second: it looks at the job 5 times, so that a short job is answered fast. */
  waitFirstSecondCommands: 5,
  /** The default queue's engine commands per job as docs/cost.md gives them: flow control must not raise them. */
  defaultCommandsPerJob: 4.6,
  // Flow control (issue 10), extra commands per job against a default queue in the same run.
  groupConcurrencyExtraCommandsPerJob: 1,
  priorityExtraCommandsPerJob: 1,
  /** Per job started, queue or group rate limit. */
  rateLimitExtraCommandsPerStart: 2,
  /** Per job that has an id. */
  dedupWindowExtraCommandsPerJob: 2,
  /** The Worker as `wrangler deploy --minify` uploads it (issue 17): every cold isolate parses all of it. */
  workerBundleMinifiedBytes: 900_000,
  // Issue 20: the CPU of every workerd process per job in the end-to-end batch run, and the burst
  // (bench/lib/burst.ts): the API answers while 1,000 jobs drain, the cron runs never fail.
  workerCpuMsPerJob: 1,
  burstGetP99Ms: 300,
  burstGetMaxMs: 1_000,
  burstConnectionResets: 0,
  burstFailedTicks: 0,
  // Issue 18: a scrape of GET /metrics, whatever the number of queues: the control database's
  // copy read (3) and written (3), and at most 25 queues read (4 each).
  scrapeCommandsMax: 106,
  // Issue 30: a job's `completed` from its change to a queue stream's reader on the local stack,
  // at most 1 Redis command more per event with a stream open (the design adds none), and none
  // at all while streams sit idle.
  eventLatencyP95Ms: 250,
  eventExtraCommandsPerEvent: 1,
  idleSubscriberCommands: 0,
} as const;
