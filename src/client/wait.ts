// `waitForJob` (and so `addAndWait`) on the job's event stream: the stream says when the job
// ends, then one GET answers the job in full, the answer the wait always had. A waiting client
// then costs the Worker no polling: `GET ?waitMs=` looks at the job in Redis 5 times in its first
// second and once a second after that (core/engine/wait-job.ts), a stream asks Redis nothing while
// it waits (docs/events.md). A Worker without the stream route (one older than the streams)
// answers its "no route" 404, NOT_FOUND, which is told apart from the route's own 404s by code:
// JOB_NOT_FOUND and QUEUE_NOT_FOUND come from a Worker that has the route. Then the wait polls,
// as it did before.
import type { Job } from '../protocol/api/types';
import { MAX_WAIT_MS, isFinished } from '../protocol/constants';
import { GroupqError } from './errors';
import { followPath } from './events';
import type { Transport } from './transport';

export interface WaitOptions {
  /** How long to wait in all; then the job is answered as it is. @default 60000 */
  timeoutMs?: number;
  /** Ends the wait (and the call in flight) at once: it throws GroupqError ABORTED. */
  signal?: AbortSignal;
}

/** The route is not there at all (an older Worker, or a proxy's 404 page): not the job's 404. */
export function isMissingRoute(error: unknown): boolean {
  return error instanceof GroupqError && ((error.status === 404 && error.code === 'NOT_FOUND') || error.status === 405);
}

/** The job at `path` (`/v1/queues/{queue}/jobs/{id}`, encoded) once it has finished, or as it is at the timeout. */
export async function waitForJob<T, R>(request: Transport, path: string, { timeoutMs = 60_000, signal }: WaitOptions = {}): Promise<Job<T, R>> {
  const deadline = Date.now() + timeoutMs;
  const wait = new AbortController();
  const timer = setTimeout(() => wait.abort(new Error(`waited ${timeoutMs} ms`)), timeoutMs);
  const leave = () => wait.abort(signal?.reason);
  signal?.addEventListener('abort', leave, { once: true });
  if (signal?.aborted) leave();
  try {
    const events = followPath(request, `${path}/events`, true, { signal: wait.signal });
    // The iterator ends after the job's final event, or when a resume finds the job has ended.
    for await (const event of events) if (isFinished(event.event)) break;
  } catch (error) {
    if (signal?.aborted) throw error; // ABORTED, with the caller's reason as its cause
    if (isMissingRoute(error)) return poll<T, R>(request, path, deadline, signal);
    // Past the timeout the job is answered as it is; any other failure is the wait's.
    if (!wait.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', leave);
  }
  return request<Job<T, R>>({ method: 'GET', path, idempotent: true, signal });
}

/** The wait of a Worker without streams: `GET ...?waitMs=`, repeated until the deadline. */
async function poll<T, R>(request: Transport, path: string, deadline: number, signal: AbortSignal | undefined): Promise<Job<T, R>> {
  for (;;) {
    const waitMs = Math.min(MAX_WAIT_MS, Math.max(0, Math.ceil(deadline - Date.now())));
    const job = await request<Job<T, R>>({ method: 'GET', path: `${path}?waitMs=${waitMs}`, idempotent: true, signal });
    if (isFinished(job.state) || Date.now() >= deadline) return job;
  }
}
