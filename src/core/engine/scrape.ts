// What GET /metrics shows: every queue's (and partition's) lifetime totals and gauges, read at a
// bounded cost whatever the number of queues. The totals live in each queue's meta, where the
// scripts count them at no command of their own (src/lua/includes/totals.lua); a scrape reads
// the control database's copy of them all (totals-cache.lua, one call) and refreshes at most
// `maxReads` parts from their queues, those read longest ago first and none read within
// `freshMs`, then stores what it read back in the copy (one call). With more parts than
// `maxReads`, each is read every few scrapes: a part's `at` says how old its figures are.
import { scripts } from '../../lua/scripts.generated';
import { QueueError } from '../../protocol/errors';
import type { EngineContext } from '../store/context';
import { partitionTags, partitionOfTag, queueOfTag } from '../store/partitions';
import { callScript } from '../store/scripts';

/** The upper bounds of the wait and run histograms' buckets, in ms (totals.lua BOUNDS_MS); +Inf follows. */
export const HISTOGRAM_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000] as const;

/** A count per bucket (HISTOGRAM_BOUNDS_MS, then +Inf), and the sum of what was observed, in ms. */
export interface Histogram {
  counts: number[];
  sumMs: number;
}

export const TOTAL_NAMES = ['added', 'completed', 'failed', 'retried', 'cancelled', 'throttled', 'callbacksDelivered', 'callbackAttemptsFailed', 'callbacksAbandoned', 'expired'] as const;
export type Totals = Record<(typeof TOTAL_NAMES)[number], number>;

/** One queue or partition as a scrape last read it (stored as JSON in the control database's copy). */
export interface PartSnapshot {
  /** When it was read (epoch ms), and the sum of its counters: the copy keeps the higher (v, at). */
  at: number;
  v: number;
  /** A partitioned queue's root: its partition count (its figures are its partitions'). */
  partitions?: number;
  paused: boolean;
  /** Jobs not ended; null for a queue older than the count that has not counted them yet (quota.lua). */
  live: number | null;
  active: number;
  delayed: number;
  /** Groups with jobs: idle ones ready, held or paused ones, and leased ones (as queue-info.lua counts). */
  groups: number;
  pausedGroups: number;
  totals: Totals;
  wait: Histogram;
  run: Histogram;
}

export interface PartFigures extends PartSnapshot {
  queue: string;
  /** null: a queue without partitions. */
  partition: number | null;
}

export interface ScrapeOptions {
  /** Parts read from their queues per scrape, at most. */
  maxReads: number;
  /** A part read this recently is not read again. */
  freshMs: number;
}

export const SCRAPE_DEFAULTS: ScrapeOptions = { maxReads: 25, freshMs: 10_000 };

function histogramOf(text: string): Histogram {
  const values = text === '' ? [] : text.split(' ').map(Number);
  const counts = HISTOGRAM_BOUNDS_MS.map((_, i) => values[i] ?? 0);
  counts.push(values[HISTOGRAM_BOUNDS_MS.length] ?? 0);
  return { counts, sumMs: values[HISTOGRAM_BOUNDS_MS.length + 1] ?? 0 };
}

const num = (text: string | undefined) => (text === undefined || text === '' ? 0 : Number(text));

/** Reads one part from its queue's keys: null when the queue is gone. */
async function readPart(ctx: EngineContext, tag: string, now: number): Promise<PartSnapshot | null> {
  const { exists, values, held, delayed } = await callScript(ctx, scripts.queueTotals, { queue: tag }, []);
  if (!exists) return null;
  // queue-totals.lua's order: partitions, paused, live, active, ready, pausedGroups, then n:a..n:oa, n:e, h:w, h:r.
  const [partitions, paused, live, active, ready, pausedGroups, ...rest] = values;
  const counters = rest.slice(0, TOTAL_NAMES.length).map(num);
  const totals = Object.fromEntries(TOTAL_NAMES.map((name, i) => [name, counters[i]!])) as Totals;
  const wait = histogramOf(rest[TOTAL_NAMES.length] ?? '');
  const run = histogramOf(rest[TOTAL_NAMES.length + 1] ?? '');
  const observed = (h: Histogram) => h.counts.reduce((a, b) => a + b, 0);
  const snapshot: PartSnapshot = {
    at: now,
    v: counters.reduce((a, b) => a + b, 0) + observed(wait) + observed(run),
    paused: paused === '1',
    live: live === '' ? null : num(live),
    active: num(active),
    delayed,
    groups: num(ready) + held + num(active),
    pausedGroups: num(pausedGroups),
    totals,
    wait,
    run,
  };
  if (num(partitions) > 1) snapshot.partitions = num(partitions);
  return snapshot;
}

/** The parts a queue has, as its root's snapshot says (a root not read yet: the queue alone). */
function partsOf(queue: string, root: PartSnapshot | undefined): string[] {
  return root?.partitions ? partitionTags(queue, root.partitions) : [];
}

/**
 * Every queue's parts with their figures, refreshing at most `options.maxReads` of them. A part
 * whose read fails (its database down) keeps the figures last read; one never read is left out.
 */
export async function scrape(ctx: EngineContext, options: ScrapeOptions = SCRAPE_DEFAULTS): Promise<PartFigures[]> {
  const now = ctx.now();
  const { names, entries } = await callScript(ctx, scripts.totalsCache, {}, ['read']);
  const queues = new Set(names);
  const known = new Map<string, PartSnapshot>();
  const gone: string[] = [];
  for (const [tag, json] of entries) {
    if (queues.has(queueOfTag(tag))) known.set(tag, JSON.parse(json) as PartSnapshot);
    else gone.push(tag);
  }
  const fresh = new Map<string, PartSnapshot>();
  let reads = 0;
  const refresh = async (tags: string[]) => {
    const due = tags
      .filter((tag) => (known.get(tag)?.at ?? -Infinity) < now - options.freshMs)
      .sort((a, b) => (known.get(a)?.at ?? -Infinity) - (known.get(b)?.at ?? -Infinity))
      .slice(0, options.maxReads - reads);
    reads += due.length;
    const read = await Promise.allSettled(due.map((tag) => readPart(ctx, tag, now)));
    read.forEach((answer, i) => {
      if (answer.status === 'rejected') {
        if (!(answer.reason instanceof QueueError)) throw answer.reason;
        return; // its database is down: the figures last read stand
      }
      if (answer.value === null) gone.push(due[i]!);
      else fresh.set(due[i]!, answer.value);
    });
  };
  const roots = [...queues];
  await refresh([...roots, ...roots.flatMap((queue) => partsOf(queue, known.get(queue)))]);
  // A root read for the first time may reveal partitions: they are read in the same scrape.
  await refresh(roots.flatMap((queue) => (known.has(queue) ? [] : partsOf(queue, fresh.get(queue)))));

  const write = [...fresh].flatMap(([tag, snapshot]) => [tag, snapshot.v, snapshot.at, JSON.stringify(snapshot)]);
  if (write.length > 0) await callScript(ctx, scripts.totalsCache, {}, ['write', ...write]);
  if (gone.length > 0) await callScript(ctx, scripts.totalsCache, {}, ['forget', ...gone]);

  const figures: PartFigures[] = [];
  for (const queue of roots.sort()) {
    const root = fresh.get(queue) ?? known.get(queue);
    const tags = root?.partitions ? partsOf(queue, root) : [queue];
    for (const tag of tags) {
      const snapshot = fresh.get(tag) ?? known.get(tag);
      if (snapshot) figures.push({ ...snapshot, queue, partition: partitionOfTag(tag) });
    }
  }
  return figures;
}

/** Forgets a deleted queue's parts in the control database's copy. */
export async function forgetTotals(ctx: EngineContext, tags: string[]): Promise<void> {
  await callScript(ctx, scripts.totalsCache, {}, ['forget', ...tags]);
}
