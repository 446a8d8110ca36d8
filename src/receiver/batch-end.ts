// How a batch function's run ended, and what that tells groupq, in the two ways it can be told
// (docs/receiver.md#batches): as the answer to the batch (synchronous: 200 with every result, or
// a partial answer that completes jobs 0..k-1 and fails job k; 429 to hold the batch) or, after
// a 202, as the jobs' own complete and fail callbacks, one job after the other in group order.
import type { BatchAnswer } from '../protocol/batch-body';
import type { FailBody } from './callbacks';
import { BatchError } from './errors';
import type { Lease, RunEnd } from './lease';
import { type Captured, errorText, failOf, textResponse } from './run-end';

/**
 * A batch's end: jobs 0..completed-1 complete, job i with results[i] (none given: null each), and
 * job `completed` fails with `fail` when there is one; groupq returns the jobs after it to the
 * head of their group untouched.
 */
export interface BatchEnd {
  completed: number;
  results: readonly unknown[] | undefined;
  fail?: FailBody;
}

/** What a run that returned something other than an array of results is told: the same run would return it again. */
function notResults(value: unknown): FailBody {
  const what = value === null ? 'null' : typeof value;
  return { error: `the batch function returned ${what}, not an array of results (or nothing)`, retry: false };
}

/**
 * The end of a run over the first `ran` jobs of the batch: all of them unless the data of job
 * `ran` did not parse (`refused`, which then fails that job once the ones before it completed).
 * A BatchError at or past `ran` completes every job that ran, as the answer would.
 */
export function batchEndOf(run: Captured, ran: number, refused?: FailBody): BatchEnd {
  let end: BatchEnd;
  if (run.ok) {
    end = run.value === undefined || Array.isArray(run.value) ? { completed: ran, results: run.value } : { completed: 0, results: [], fail: notResults(run.value) };
  } else if (run.error instanceof BatchError) {
    end = { completed: run.error.completed, results: run.error.results, fail: failOf(run.error.error) };
  } else {
    end = { completed: 0, results: [], fail: failOf(run.error) };
  }
  if (end.completed < ran) return end;
  return { completed: ran, results: refused ? (end.results ?? []) : end.results, ...(refused ? { fail: refused } : {}) };
}

/** The results of the jobs that complete, each checked as JSON: a job whose result is not ends the batch there, for good. */
function checkedResults(end: BatchEnd): BatchEnd {
  const results = end.results?.slice(0, end.completed);
  for (const [index, result] of (results ?? []).entries()) {
    try {
      JSON.stringify(result);
    } catch (error) {
      // Not JSON (a BigInt, a cycle): the same result would fail every attempt.
      return { completed: index, results: results!.slice(0, index), fail: { error: `the result is not JSON: ${errorText(error)}`, retry: false } };
    }
  }
  return { ...end, results };
}

/**
 * The synchronous answer: 200 with no body (every job completes, no results), `{"results"}`, or
 * the partial answer; a failure of the first job that asks for a delay (RetryAfterError) is 429
 * with Retry-After (whole seconds, rounded up): groupq holds the batch that long, no attempt used.
 */
export function batchResponseOf(ended: BatchEnd): Response {
  const { completed, results, fail } = checkedResults(ended);
  if (fail?.retryAfterMs !== undefined && completed === 0) {
    return textResponse(429, fail.error, { 'retry-after': String(Math.ceil(fail.retryAfterMs / 1000)) });
  }
  if (!fail && results === undefined) return new Response(null, { status: 200 });
  const given = [...(results ?? [])];
  const answer: BatchAnswer = fail
    ? { completed, results: given, error: fail.error, ...(fail.retry === false ? { retry: false } : {}) }
    : { results: given };
  return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
}

/**
 * Ends the batch after a 202, through the jobs' callbacks in order: complete 0..completed-1, then
 * fail job `completed`. The lease is heartbeated until the last callback, which goes out after
 * the heartbeats stopped (as a single job's end does). A callback that does not land as asked
 * (the lease lost, a result refused and the job failed instead, a network failure) ends it there:
 * groupq takes the jobs after it back.
 */
export async function finishBatch(lease: Lease, end: BatchEnd): Promise<void> {
  const ends: RunEnd[] = [];
  for (let index = 0; index < end.completed; index++) ends.push({ kind: 'complete', result: end.results?.[index] });
  if (end.fail) ends.push({ kind: 'fail', ...end.fail });
  const last = ends.pop();
  for (const each of ends) {
    if (lease.lost || !(await lease.report(each))) {
      await lease.stop();
      return;
    }
  }
  if (last) await lease.finish(last);
  else await lease.stop();
}
