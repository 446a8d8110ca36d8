// Repeatable jobs: list a queue's, create or replace one (a run every --every-ms, or at each
// --cron time), delete one. Each run is an ordinary job (docs/http-api.md#repeatable-jobs).
import type { Repeat, RepeatInput } from '../client';
import { type FlagValues, intFlag, jsonFlag } from './args';
import { type CommandContext, type CommandRun, str } from './context';
import { EXIT_OK, UsageError } from './output';
import { relativeTime, table } from './table';

const UNITS: [number, string][] = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'm'], [1000, 's']];

/** An interval in its largest unit that says it exactly: 1h, 90s, 1500ms. */
function interval(ms: number): string {
  const unit = UNITS.find(([size]) => ms % size === 0);
  return unit ? `${ms / unit[0]}${unit[1]}` : `${ms}ms`;
}

function scheduleOf(repeat: Repeat): string {
  if (repeat.every !== undefined) return `every ${interval(repeat.every)}`;
  return `cron ${repeat.pattern} (${repeat.tz})`;
}

async function list({ client, out, args }: CommandContext): Promise<number> {
  const repeats = await client.queue(args[0]!).repeats.list();
  if (out.json) {
    out.document(repeats);
    return EXIT_OK;
  }
  if (repeats.length === 0) {
    out.line('no repeats');
    return EXIT_OK;
  }
  const now = Date.now();
  const columns = [{ header: 'KEY' }, { header: 'GROUP' }, { header: 'SCHEDULE' }, { header: 'NEXT RUN' }, { header: 'RUNS', align: 'right' as const }];
  const rows = repeats.map((repeat) => [
    repeat.key,
    repeat.group,
    scheduleOf(repeat),
    repeat.nextRunAt === null ? 'ended' : relativeTime(repeat.nextRunAt, now),
    repeat.limit === undefined ? String(repeat.count) : `${repeat.count}/${repeat.limit}`,
  ]);
  out.lines(table(columns, rows));
  return EXIT_OK;
}

/** --start-at / --end-at: epoch ms, or a time Date.parse reads (ISO 8601). */
function instantFlag(flags: FlagValues, name: string): number | undefined {
  const raw = str(flags, name);
  if (raw === undefined) return undefined;
  const at = /^\d+$/.test(raw.trim()) ? Number(raw) : Date.parse(raw);
  if (!Number.isSafeInteger(at)) throw new UsageError(`--${name} is epoch ms or an ISO 8601 time like 2030-01-31T09:00:00Z (got "${raw}")`, 'repeats put');
  return at;
}

async function put({ client, out, args, flags, stdin }: CommandContext): Promise<number> {
  const group = str(flags, 'group');
  if (group === undefined) throw new UsageError('missing --group <name>', 'repeats put');
  const pattern = str(flags, 'cron');
  const every = intFlag(flags, 'every-ms', 'repeats put', 0);
  if ((pattern === undefined) === (every === undefined)) throw new UsageError('give one of --cron <pattern> and --every-ms <ms>', 'repeats put');
  const tz = str(flags, 'tz');
  if (tz !== undefined && pattern === undefined) throw new UsageError('--tz goes with --cron', 'repeats put');
  const spec: RepeatInput = {
    group,
    data: await jsonFlag(flags, 'data', 'repeats put', stdin),
    every,
    pattern,
    tz,
    startAt: instantFlag(flags, 'start-at'),
    endAt: instantFlag(flags, 'end-at'),
    limit: intFlag(flags, 'limit', 'repeats put', 1),
  };
  const [queue, key] = [args[0]!, args[1]!];
  const result = await client.queue(queue).repeats.put(key, spec);
  if (out.json) out.document(result);
  else if (result.nextRunAt === null) out.line(`repeat ${key} of ${queue}: no run ahead (its --end-at or --limit ended the series)`);
  else out.line(`repeat ${key} of ${queue}: next run ${relativeTime(result.nextRunAt, Date.now())} (${new Date(result.nextRunAt).toISOString()})`);
  return EXIT_OK;
}

async function remove({ client, out, args }: CommandContext): Promise<number> {
  const [queue, key] = [args[0]!, args[1]!];
  await client.queue(queue).repeats.delete(key);
  if (out.json) out.document({ key, deleted: true });
  else out.line(`deleted repeat ${key} of ${queue} (runs already enqueued stay)`);
  return EXIT_OK;
}

export const REPEAT_RUNS: Record<string, CommandRun> = {
  'repeats list': list,
  'repeats put': put,
  'repeats delete': remove,
};
