// Stopping a running command: Ctrl-C in the bin, an AbortSignal in tests. A request in flight
// cannot be taken back, so a stop stops waiting for it instead.
import { setTimeout as sleep } from 'node:timers/promises';

export const STOPPED = Symbol('stopped');

/** `promise`, or STOPPED as soon as `signal` aborts (an in-flight request is then left behind). */
export function unlessStopped<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof STOPPED> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(STOPPED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(STOPPED);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Waits `ms`; false when stopped meanwhile. */
export async function wait(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await sleep(ms, undefined, signal ? { signal } : {});
    return true;
  } catch {
    return false;
  }
}
