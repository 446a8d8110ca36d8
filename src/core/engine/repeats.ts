// Repeatable jobs: `every` ms or a 5-field cron `pattern` in a time zone. Next run times are
// computed here with cron-parser; scripts store specs and commit runs with compare-and-set.
import { CronExpressionParser } from 'cron-parser';
import { checkQueueName, parse, parseParam } from '../../protocol/parse';
import { scripts } from '../../lua/scripts.generated';
import type { Repeat } from '../../protocol/api/types';
import type { Body, EngineContext, QueueRef, RepeatRef } from '../store/context';
import { QueueError } from '../../protocol/errors';
import { repeatInputSchema, repeatKeySchema } from '../../protocol/job-input';
import { ScriptRefusal, isRefusal } from '../store/refusals';
import { onEachPartition, onGroup, tagOfGroup, tagsOf } from './partitions';
import { callScript } from '../store/scripts';

/** The most repeatable jobs one queue may hold. */
const MAX_REPEATS = 1000;

/** A repeat as stored (data as JSON text); count, nextRunAt and version v are kept by the scripts. */
export type RepeatSpec = Omit<Repeat, 'key' | 'data' | 'count' | 'nextRunAt'> & {
  data: string;
  count?: number;
  nextRunAt?: number;
  v?: number;
};

export type { Repeat } from '../../protocol/api/types';

function invalid(path: string, message: string): QueueError {
  return new QueueError('VALIDATION_FAILED', `${path}: ${message}`, [{ path, message }]);
}

function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw invalid('tz', `unknown IANA time zone "${tz}"`);
  }
}

function checkPattern(pattern: string, tz: string): void {
  // Five fields, no seconds, no `H` token (random per parse: racing schedulers would disagree;
  // day names such as THU are fine).
  const fields = pattern.trim().split(/\s+/);
  if (fields.length !== 5) throw invalid('pattern', 'expected a 5-field cron pattern');
  if (fields.some((field) => field.split(/[,/-]/).some((part) => /^H(\(|$)/i.test(part)))) {
    throw invalid('pattern', 'the H (hashed) token is not supported');
  }
  try {
    CronExpressionParser.parse(pattern, { tz }).next();
  } catch (error) {
    throw invalid('pattern', error instanceof Error ? error.message : 'invalid cron pattern');
  }
}

/** The first occurrence of `pattern` strictly after `after`. */
function nextCron(pattern: string, tz: string, after: number): number {
  return CronExpressionParser.parse(pattern, { tz, currentDate: new Date(after) }).next().getTime();
}

/** The first run of a new or replaced repeat, or null when there is none. */
export function firstRunAt(spec: RepeatSpec, now: number): number | null {
  let at: number;
  if (spec.every !== undefined) at = spec.startAt ?? now + spec.every;
  else at = nextCron(spec.pattern!, spec.tz, Math.max(now, spec.startAt ?? 0) - 1);
  return spec.endAt !== undefined && at > spec.endAt ? null : at;
}

/**
 * The run after the one at `runAt`: the next future occurrence (missed runs are skipped). The
 * script ends the schedule when `limit` runs exist; `endAt` is checked here.
 */
export function runAfter(spec: RepeatSpec, runAt: number, now: number): number | null {
  let at: number;
  if (spec.every !== undefined) {
    const steps = Math.max(1, Math.floor((now - runAt) / spec.every) + 1);
    at = runAt + steps * spec.every;
  } else {
    at = nextCron(spec.pattern!, spec.tz, Math.max(now, runAt));
  }
  return spec.endAt !== undefined && at > spec.endAt ? null : at;
}

/**
 * A repeat lives in the partition of its group (its runs are that group's jobs); a partitioned
 * queue's other partitions are cleared of the key, so a key names one repeat per queue.
 */
export async function putRepeat(ctx: EngineContext, { queue, key, body: input }: RepeatRef & Body) {
  checkQueueName(queue);
  parseParam(repeatKeySchema, key, 'key');
  const parsed = parse(repeatInputSchema, input);
  checkTimeZone(parsed.tz);
  if (parsed.pattern !== undefined) checkPattern(parsed.pattern, parsed.tz);
  const spec: RepeatSpec = { ...parsed, data: JSON.stringify(parsed.data) };
  const now = ctx.now();
  const args = [key, JSON.stringify(spec), firstRunAt(spec, now) ?? -1, MAX_REPEATS, now] as const;
  const nextRunAt = await onGroup(ctx, queue, parsed.group, (at) => callScript(ctx, scripts.putRepeat, { queue: at }, args));
  const tag = tagOfGroup(ctx, queue, parsed.group);
  const others = tagsOf(ctx, queue).filter((other) => other !== tag);
  await Promise.all(others.map((other) => deleteRepeatAt(ctx, other, key).catch(ignoreNotFound)));
  return { key, nextRunAt };
}

const ignoreNotFound = (error: unknown) => {
  if (!isRefusal(error, 'REPEAT_NOT_FOUND')) throw error;
};

export async function listRepeats(ctx: EngineContext, { queue }: QueueRef): Promise<Repeat[]> {
  checkQueueName(queue);
  const flat = (await onEachPartition(ctx, queue, (tag) => callScript(ctx, scripts.listRepeats, { queue: tag }, []))).flat();
  const repeats: Repeat[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const { data, count, nextRunAt, v: _version, ...spec } = JSON.parse(flat[i + 1]!) as RepeatSpec;
    repeats.push({ key: flat[i]!, ...spec, data: JSON.parse(data), count: count ?? 0, nextRunAt: nextRunAt ?? null });
  }
  return repeats.sort((a, b) => (a.key < b.key ? -1 : 1));
}

export async function deleteRepeat(ctx: EngineContext, { queue, key }: RepeatRef): Promise<void> {
  checkQueueName(queue);
  parseParam(repeatKeySchema, key, 'key');
  const deleted = await onEachPartition(ctx, queue, (tag) => deleteRepeatAt(ctx, tag, key).then(() => true, (error: unknown) => ignoreNotFound(error) ?? false));
  if (!deleted.includes(true)) throw new ScriptRefusal('REPEAT_NOT_FOUND');
}

function deleteRepeatAt(ctx: EngineContext, tag: string, key: string) {
  return callScript(ctx, scripts.deleteRepeat, { queue: tag }, [key]);
}
