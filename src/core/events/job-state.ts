// A job's stream opens with the job as it is (read after the stream attached to its hub), told as
// the event that would have brought it there: a reader who comes late learns where the job
// stands in the model it reads the rest in (src/protocol/events.ts), with no GET of its own.
import type { Job } from '../../protocol/api/types';
import type { JobEvent } from '../../protocol/events';

type StateEvent = Omit<JobEvent, 'eventId'>;

/** The event of `job`'s current state. */
export function stateEventOf(job: Job): StateEvent {
  const base = { id: job.id, queue: job.queue, group: job.group, attempt: job.attempts };
  const started = { ...base, attempt: Math.max(1, job.attempts) };
  const ended = job.finishedAt ?? job.createdAt;
  switch (job.state) {
    case 'waiting':
    case 'delayed':
      return {
        event: 'added',
        data: { ...base, state: job.state, at: job.createdAt, ...(job.state === 'delayed' && job.runAt !== undefined && { runAt: job.runAt }) },
      };
    case 'active': {
      const at = job.startedAt ?? job.createdAt;
      // A reader who joins mid-attempt gets the last progress it reported, if any.
      if (job.progress !== undefined) return { event: 'progress', data: { ...started, state: 'active', at, progress: job.progress as never } };
      return { event: 'active', data: { ...started, state: 'active', at } };
    }
    case 'completed':
      return {
        event: 'completed',
        data: {
          ...started, state: 'completed', at: ended,
          ...(job.result !== undefined && { result: job.result as never }),
          ...(job.resultTruncated && { resultTruncated: true }),
        },
      };
    case 'failed':
      return { event: 'failed', data: { ...base, state: 'failed', at: ended, ...(job.error !== undefined && { error: job.error }) } };
    case 'cancelled':
      return { event: 'cancelled', data: { ...base, state: 'cancelled', at: ended } };
    case 'expired':
      return { event: 'expired', data: { ...base, attempt: 0, state: 'expired', at: ended, expiresAt: job.expiresAt ?? ended } };
  }
}
