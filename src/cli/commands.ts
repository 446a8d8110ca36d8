// The one-shot commands: list queues and jobs, show a job, enqueue, retry, remove, promote,
// retry every failed job, clean finished jobs, cancel, pause and resume, repair, list and move a
// queue's partitions, set or clear a group's limits. Each makes its calls through GroupqClient
// and prints a table or a line for people, or one JSON document with --json. RUNS adds the
// commands of queue-commands.ts, repeat-commands.ts and status-commands.ts; the monitor lives in
// monitor.ts.
import type { CleanOptions, EnqueueResult, GroupLimits, Job, JobInput, QueueCounts } from '../client';
import { type FlagValues, intFlag, jsonFlag } from './args';
import { type CommandContext, type CommandRun, str } from './context';
import { EXIT_API_ERROR, EXIT_OK, UsageError } from './output';
import { QUEUE_RUNS } from './queue-commands';
import { REPEAT_RUNS } from './repeat-commands';
import { STATUS_RUNS } from './status-commands';
import { type Column, oneLine, relativeTime, table } from './table';

/** The count columns of a queue or a partition, in the order `countsOf` gives them. */
const countColumns = (): Column[] =>
  ['WAITING', 'DELAYED', 'ACTIVE', 'COMPLETED', 'FAILED', 'CANCELLED', 'EXPIRED', 'GROUPS'].map((header) => ({ header, align: 'right' as const }));

const countsOf = (c: QueueCounts) => [c.waiting, c.delayed, c.active, c.completed, c.failed, c.cancelled, c.expired, c.groups].map(String);

async function queues({ client, out }: CommandContext): Promise<number> {
  const list = await client.queues();
  if (out.json) {
    out.document(list);
    return EXIT_OK;
  }
  if (list.length === 0) {
    out.line('no queues');
    return EXIT_OK;
  }
  const rows = list.map(({ name, paused, counts }) => [name, paused ? 'yes' : 'no', ...countsOf(counts)]);
  out.lines(table([{ header: 'NAME' }, { header: 'PAUSED' }, ...countColumns()], rows));
  return EXIT_OK;
}

/** --debounce-key with --debounce-ms (and --debounce-max-ms): both or neither. */
function debounceOf(flags: FlagValues): JobInput['debounce'] {
  const key = str(flags, 'debounce-key');
  const delayMs = intFlag(flags, 'debounce-ms', 'enqueue', 0);
  const maxDelayMs = intFlag(flags, 'debounce-max-ms', 'enqueue', 0);
  if (key === undefined) {
    if (delayMs !== undefined || maxDelayMs !== undefined) throw new UsageError('--debounce-ms and --debounce-max-ms need --debounce-key <key>', 'enqueue');
    return undefined;
  }
  if (delayMs === undefined) throw new UsageError('--debounce-key needs --debounce-ms <ms>', 'enqueue');
  return { key, delayMs, maxDelayMs };
}

/** How the queue took the job, after its id and state. */
function enqueueNote(result: EnqueueResult): string {
  if (result.duplicate) return ' (duplicate: a job with this id was enqueued already)';
  if (result.debounced) return ' (debounced: the waiting job with this key took the data)';
  return '';
}

async function enqueue({ client, out, args, flags, stdin }: CommandContext): Promise<number> {
  const group = str(flags, 'group');
  if (group === undefined) throw new UsageError('missing --group <name>', 'enqueue');
  // Everything is checked before the request: a bad flag must not half-enqueue anything. Flags
  // not given stay undefined, which the request's JSON leaves out.
  const data = await jsonFlag(flags, 'data', 'enqueue', stdin);
  const result = await client.queue(args[0]!).add({
    group,
    data,
    id: str(flags, 'id'),
    callbackUrl: str(flags, 'callback-url'),
    delayMs: intFlag(flags, 'delay', 'enqueue', 0),
    orderMs: intFlag(flags, 'order-ms', 'enqueue', 0),
    priority: intFlag(flags, 'priority', 'enqueue', -1000, 1000),
    ttlMs: intFlag(flags, 'ttl', 'enqueue', 1),
    debounce: debounceOf(flags),
  });
  if (out.json) out.document(result);
  else out.line(`${result.id} ${result.state}${enqueueNote(result)}`);
  return EXIT_OK;
}

/** The last column of `jobs`: what matters about a job in that state. */
function detailOf(job: Job, now: number): string {
  if (job.error !== undefined) return oneLine(job.error);
  if (job.runAt !== undefined) return `runs ${relativeTime(job.runAt, now)}`;
  if (job.expiresAt !== undefined && job.state !== 'expired') return `expires ${relativeTime(job.expiresAt, now)} unless started`;
  if (job.state === 'active' && job.leaseExpiresAt !== undefined) return `lease ends ${relativeTime(job.leaseExpiresAt, now)}`;
  if (job.finishedAt !== undefined) return `finished ${relativeTime(job.finishedAt, now)}`;
  return '';
}

async function jobs({ client, out, args, flags }: CommandContext): Promise<number> {
  const limit = intFlag(flags, 'limit', 'jobs', 1, 1000);
  const state = str(flags, 'state') as Job['state'] | undefined;
  const group = str(flags, 'group');
  const list = client.queue(args[0]!).listJobs({
    ...(state === undefined ? {} : { state }),
    ...(group === undefined ? {} : { group }),
    ...(limit === undefined ? {} : { limit }),
  });
  let found: Job[];
  let cursor: string | null = null;
  if (flags.all) {
    found = [];
    for await (const job of list) found.push(job);
  } else {
    ({ jobs: found, cursor } = await list);
  }
  if (out.json) {
    out.document({ jobs: found, cursor });
    return EXIT_OK;
  }
  if (found.length === 0 && cursor === null) {
    out.line(`no ${state ?? 'waiting'} jobs${group === undefined ? '' : ` in group ${group}`}`);
    return EXIT_OK;
  }
  // A page of a hash walk (waiting jobs) may hold none and still have more after it (docs/http-api.md#paging).
  if (found.length === 0) {
    out.line('(no job on this page; more jobs: pass --all)');
    return EXIT_OK;
  }
  const now = Date.now();
  const columns = [{ header: 'ID' }, { header: 'GROUP' }, { header: 'STATE' }, { header: 'ATTEMPTS', align: 'right' as const }, { header: 'DETAIL' }];
  const rows = found.map((job) => [job.id, job.group, job.state, `${job.attempts}/${job.maxAttempts}`, detailOf(job, now)]);
  out.lines(table(columns, rows));
  if (cursor !== null) out.line(`(more jobs: pass --all, or --limit up to 1000)`);
  return EXIT_OK;
}

async function job({ client, out, args, flags }: CommandContext): Promise<number> {
  const waitMs = intFlag(flags, 'wait', 'job', 0);
  const queue = client.queue(args[0]!);
  const found = waitMs === undefined ? await queue.getJob(args[1]!) : await queue.waitForJob(args[1]!, { timeoutMs: waitMs });
  // Both ways print JSON: a job is data; people get it indented.
  out.line(out.json ? JSON.stringify(found) : JSON.stringify(found, null, 2));
  return EXIT_OK;
}

/**
 * Runs `act` for each id in turn: one bad id does not stop the others, and each failure is
 * reported with its id. Exit 1 when any failed.
 */
async function eachId<R>(ctx: CommandContext, act: (id: string) => Promise<R>, say: (id: string, result: R) => string) {
  const done: R[] = [];
  let failed = false;
  for (const id of ctx.args.slice(1)) {
    try {
      const result = await act(id);
      done.push(result);
      if (!ctx.out.json) ctx.out.line(say(id, result));
    } catch (error) {
      failed = true;
      ctx.out.apiError(error, id);
    }
  }
  if (ctx.out.json) ctx.out.document(done);
  return failed ? EXIT_API_ERROR : EXIT_OK;
}

const retry: CommandRun = (ctx) => {
  const queue = ctx.client.queue(ctx.args[0]!);
  return eachId(ctx, (id) => queue.retryJob(id), (id, job) => `retried ${id} (${job.state})`);
};

const remove: CommandRun = (ctx) => {
  const queue = ctx.client.queue(ctx.args[0]!);
  return eachId(
    ctx,
    async (id) => {
      await queue.removeJob(id);
      return { id, removed: true };
    },
    (id) => `removed ${id}`,
  );
};

async function retryAll({ client, out, args }: CommandContext): Promise<number> {
  const { count } = await client.queue(args[0]!).retryAll({ state: 'failed' });
  if (out.json) out.document({ count });
  else out.line(`retried ${count} failed job${count === 1 ? '' : 's'}`);
  return EXIT_OK;
}

async function clean({ client, out, args, flags }: CommandContext): Promise<number> {
  const state = str(flags, 'state');
  if (state === undefined) throw new UsageError('missing --state <state> (completed, failed, cancelled or expired)', 'clean');
  // The server checks the state (a wrong one: VALIDATION_FAILED, exit 1), as for `jobs --state`.
  const { count } = await client.queue(args[0]!).clean({ state: state as CleanOptions['state'] });
  if (out.json) out.document({ count });
  else out.line(`deleted ${count} ${state} job${count === 1 ? '' : 's'}`);
  return EXIT_OK;
}

async function promote({ client, out, args }: CommandContext): Promise<number> {
  const promoted = await client.queue(args[0]!).promoteJob(args[1]!);
  if (out.json) out.document(promoted);
  else out.line(`promoted ${promoted.id} (${promoted.state})`);
  return EXIT_OK;
}

const cancel: CommandRun = (ctx) => {
  const queue = ctx.client.queue(ctx.args[0]!);
  return eachId(ctx, (id) => queue.cancel(id), (id) => `cancelled ${id}`);
};

const repair: CommandRun = async ({ client, out, args }) => {
  const result = await client.queue(args[0]!).repair();
  if (out.json) out.document(result);
  else out.line(`re-indexed ${result.reindexed} jobs, offered ${result.offered} groups again`);
  return EXIT_OK;
};

const partitions: CommandRun = async ({ client, out, args }) => {
  const list = await client.queue(args[0]!).partitions();
  if (out.json) {
    out.document(list);
    return EXIT_OK;
  }
  const rows = list.map(({ partition, database, counts }) => [String(partition), String(database), ...countsOf(counts)]);
  out.lines(table([{ header: 'PARTITION', align: 'right' }, { header: 'DATABASE', align: 'right' }, ...countColumns()], rows));
  return EXIT_OK;
};

const move: CommandRun = async ({ client, out, args, flags }) => {
  if (!/^\d{1,3}$/.test(args[1]!)) throw new UsageError(`not a partition: ${args[1]}`, 'move');
  const partition = Number(args[1]);
  const database = intFlag(flags, 'database', 'move', 0, 31);
  if (database === undefined) throw new UsageError('missing --database <index>', 'move');
  const moved = await client.queue(args[0]!).movePartition(partition, database);
  if (out.json) out.document(moved);
  else out.line(`partition ${moved.partition} of ${args[0]} is on database ${moved.database}`);
  return EXIT_OK;
};

function pauseOrResume(pause: boolean): CommandRun {
  return async ({ client, out, args, flags }) => {
    const queue = client.queue(args[0]!);
    const group = str(flags, 'group');
    if (group === undefined) {
      const result = pause ? await queue.pause() : await queue.resume();
      if (out.json) out.document(result);
      else out.line(`queue ${result.name} ${result.paused ? 'paused' : 'running'}`);
    } else {
      const result = pause ? await queue.pauseGroup(group) : await queue.resumeGroup(group);
      if (out.json) out.document(result);
      else out.line(`group ${result.group} in ${queue.name}: ${result.state}`);
    }
    return EXIT_OK;
  };
}

/** The limits the flags ask for; a usage error when they contradict each other or ask nothing. */
function limitsOf(flags: FlagValues): GroupLimits | 'clear' {
  const concurrency = intFlag(flags, 'concurrency', 'group-limits', 1, 1000);
  const max = intFlag(flags, 'rate-max', 'group-limits', 1);
  const periodMs = intFlag(flags, 'rate-period-ms', 'group-limits', 1);
  const rate = max !== undefined || periodMs !== undefined;
  if (flags.clear) {
    if (concurrency !== undefined || rate || flags['no-rate-limit']) throw new UsageError('--clear takes no other limit', 'group-limits');
    return 'clear';
  }
  if (rate && flags['no-rate-limit']) throw new UsageError('give --rate-max/--rate-period-ms or --no-rate-limit, not both', 'group-limits');
  if (rate && (max === undefined || periodMs === undefined)) throw new UsageError('--rate-max and --rate-period-ms go together', 'group-limits');
  const rateLimit = flags['no-rate-limit'] ? null : rate ? { max: max!, periodMs: periodMs! } : undefined;
  if (concurrency === undefined && rateLimit === undefined) {
    throw new UsageError('give --concurrency, --rate-max with --rate-period-ms, --no-rate-limit, or --clear', 'group-limits');
  }
  return { concurrency, rateLimit };
}

function describeLimits({ concurrency, rateLimit }: GroupLimits): string {
  const parts = [];
  if (concurrency !== undefined) parts.push(`concurrency ${concurrency}`);
  if (rateLimit === null) parts.push('no rate limit');
  else if (rateLimit !== undefined) parts.push(`at most ${rateLimit.max} starts per ${rateLimit.periodMs} ms`);
  return parts.join(', ');
}

async function groupLimits({ client, out, args, flags }: CommandContext): Promise<number> {
  const [queueName, group] = [args[0]!, args[1]!];
  const limits = limitsOf(flags);
  const queue = client.queue(queueName);
  if (limits === 'clear') {
    await queue.clearGroupLimits(group);
    if (out.json) out.document({ group, limits: null });
    else out.line(`group ${group} in ${queueName}: limits cleared (the queue's apply)`);
    return EXIT_OK;
  }
  const result = await queue.setGroupLimits(group, limits);
  if (out.json) out.document(result);
  else out.line(`group ${group} in ${queueName}: ${describeLimits(result.limits)}`);
  return EXIT_OK;
}

export const RUNS: Record<string, CommandRun> = {
  queues,
  enqueue,
  jobs,
  job,
  retry,
  remove,
  'retry-all': retryAll,
  clean,
  promote,
  cancel,
  pause: pauseOrResume(true),
  resume: pauseOrResume(false),
  repair,
  partitions,
  move,
  'group-limits': groupLimits,
  ...QUEUE_RUNS,
  ...REPEAT_RUNS,
  ...STATUS_RUNS,
};
