// Queues holding many jobs in one state, made through the engine in few script calls, for the
// suites that page through them; each answers the ids in the order the listing must give them.
// Jobs finished or delayed together share their finishedAt or runAt, so pages meet long ties.
import type { Engine } from '../../src/core/engine';

/** Byte order of ASCII ids: how Redis orders members with equal scores. */
export const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `count` jobs, each alone in its group, with engine-generated ids (mixed case, digits, - and _). */
async function enqueueMany(engine: Engine, q: string, count: number, job: Record<string, unknown> = {}) {
  const ids: string[] = [];
  for (let from = 0; from < count; from += 500) {
    const batch = Array.from({ length: Math.min(500, count - from) }, (_, i) => ({ group: `g${from + i}`, data: from + i, ...job }));
    ids.push(...(await engine.enqueueBatch(q, batch)).map((result) => result.id));
  }
  return ids;
}

/**
 * `count` completed or failed jobs (the queue needs concurrency and keepCompleted/keepFailed of
 * `count`, and maxAttempts 1 to fail), finished `tie` at a time at one instant each, then the
 * queue paused. Answers the ids newest first, equal finishedAt by id descending.
 */
export async function finishMany(
  engine: Engine,
  advance: (ms: number) => void,
  q: string,
  { count, tie, how }: { count: number; tie: number; how: 'complete' | 'fail' },
): Promise<string[]> {
  await enqueueMany(engine, q, count);
  const { jobs } = await engine.reserve(q, count);
  const finished: string[][] = [];
  for (let from = 0; from < jobs.length; from += tie) {
    advance(10);
    const slice = jobs.slice(from, from + tie);
    const outcomes = slice.map((job) =>
      how === 'complete'
        ? { kind: 'complete' as const, id: job.id, lease: job.lease.token }
        : { kind: 'fail' as const, id: job.id, lease: job.lease.token, error: 'HTTP 500', retry: false },
    );
    await engine.settle(q, outcomes, 0);
    finished.push(slice.map((job) => job.id));
  }
  await engine.pauseQueue(q);
  return finished.reverse().flatMap((ids) => ids.sort(byBytes).reverse());
}

/** `count` delayed jobs, runAt now + 1 h or + 2 h (ties of half each). Answers them by runAt, then id. */
export async function delayMany(engine: Engine, q: string, count: number): Promise<string[]> {
  const soon = await enqueueMany(engine, q, count / 2, { delayMs: 3_600_000 });
  const later = await enqueueMany(engine, q, count / 2, { delayMs: 7_200_000 });
  return [...soon.sort(byBytes), ...later.sort(byBytes)];
}

/** `count` waiting jobs, each alone in its group g0, g1, ... on a paused queue. Answers the groups. */
export async function groupsMany(engine: Engine, q: string, count: number): Promise<string[]> {
  await engine.pauseQueue(q);
  await enqueueMany(engine, q, count);
  return Array.from({ length: count }, (_, i) => `g${i}`);
}
