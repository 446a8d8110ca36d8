// The burst of issue 20 (docs/internals.md#sharing-the-isolate), against any running Worker:
// 1,000 jobs over 100 groups, enqueued in two batches of 500 to a queue whose endpoint answers at
// once, drain in the Worker's background while GET /v1/queues/{queue} is asked every 100 ms and
// (when `scheduled` is given) the cron fires every second, as `npm run dev`'s ticker does. It
// returns what each GET and cron run got; the tests assert on them. How long a GET waited is the
// bench's to measure (`npm run bench`, its burst): a test on a shared machine asserts no timing.
import type { QueueCounts } from '../../src/protocol/api/types';
import type { Endpoint } from './endpoint';

export const BURST_JOBS = 1000;
const GROUPS = 100;
const BATCH = 500;
const GET_EVERY_MS = 100;
const TICK_EVERY_MS = 1000;
/** Turns a GET that never answers into a failure that names it, rather than a test timeout. */
const HANG_MS = 60_000;
const DRAIN_TIMEOUT_MS = 180_000;

export interface BurstTarget {
  /** fetch against the Worker with the admin token (`json`: the body, sent as JSON). */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  /** Fires the cron trigger; left out where something else fires it (the dev ticker). */
  scheduled?: () => Promise<void>;
}

export type BurstAnswer = { status: number } | { error: string };

export interface BurstResult {
  /** Every GET sent while the jobs drained: its status, or the error fetch threw. */
  answers: BurstAnswer[];
  /** The errors of the cron runs (none when `scheduled` was not given). */
  tickErrors: string[];
  /** The queue's counts once every job completed. */
  counts: QueueCounts;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What a failed fetch says: its message and the cause's code (ECONNRESET, UND_ERR_SOCKET...). */
function describeError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return [error instanceof Error ? error.message : String(error), cause?.code ?? cause?.message].filter(Boolean).join(': ');
}

/** Calls `call` every `everyMs` (each call on its own, not waiting for the one before) until stopped. */
function every<T>(everyMs: number, call: () => Promise<T>) {
  const started: Promise<T>[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      started.push(call());
      await sleep(everyMs);
    }
  })();
  return {
    async stop(): Promise<T[]> {
      running = false;
      await loop;
      return Promise.all(started);
    },
  };
}

async function expectStatus(res: Response, status: number, what: string): Promise<void> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`${what} answered ${res.status}: ${text.slice(0, 300)}`);
}

/** Runs the burst on `queue` (a new name) and waits until every job completed. */
export async function runBurst(worker: BurstTarget, endpoint: Endpoint, queue: string): Promise<BurstResult> {
  await expectStatus(await worker.api(`/v1/queues/${queue}`, { method: 'PUT', json: { endpoint: endpoint.url, maxAttempts: 1, keepCompleted: BURST_JOBS } }), 200, 'PUT queue');
  let last: QueueCounts | undefined;
  const gets = every<BurstAnswer>(GET_EVERY_MS, async () => {
    try {
      const res = await worker.api(`/v1/queues/${queue}`, { signal: AbortSignal.timeout(HANG_MS) });
      const body = (await res.json()) as { counts?: QueueCounts };
      if (res.status === 200) last = body.counts;
      return { status: res.status };
    } catch (error) {
      return { error: describeError(error) };
    }
  });
  const { scheduled } = worker;
  const ticks = scheduled
    ? every(TICK_EVERY_MS, () =>
        scheduled().then(
          () => null,
          (error: unknown) => describeError(error),
        ),
      )
    : null;
  let answers: BurstAnswer[] = [];
  let tickErrors: string[] = [];
  try {
    const jobs = Array.from({ length: BURST_JOBS }, (_, i) => ({ id: `j${i}`, group: `g${i % GROUPS}`, data: { i } }));
    for (let from = 0; from < BURST_JOBS; from += BATCH) {
      await expectStatus(await worker.api(`/v1/queues/${queue}/jobs/batch`, { method: 'POST', json: { jobs: jobs.slice(from, from + BATCH) } }), 201, 'POST /jobs/batch');
    }
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (last?.completed !== BURST_JOBS) {
      if (Date.now() > deadline) throw new Error(`not every job completed within ${DRAIN_TIMEOUT_MS} ms: ${JSON.stringify(last)}`);
      await sleep(GET_EVERY_MS);
    }
  } finally {
    // The GETs and cron runs end with the drain, also when it failed.
    answers = await gets.stop();
    tickErrors = ((await ticks?.stop()) ?? []).filter((error) => error !== null);
  }
  return { answers, tickErrors, counts: last! };
}
