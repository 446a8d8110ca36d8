// What the holder of a capability sees of its job (capability.ts: `see`). With `result` it sees
// what the admin sees of the job's events, and of the job its state, attempts, progress, times,
// result and error; with `state` (a queue's publishEvents default) neither result nor error: an
// endpoint's answer and its error text may hold what a page's user must not read (another user's
// data, a stack trace). The job's `data` no capability sees: the page sent it, or the backend did.
//
// Events reach a stream as SSE text the hub framed once for every reader (hub.ts), so a reader
// who sees states only gets that text with the hidden fields taken out of the events that carry
// them (`completed`, `failed`, `retrying`); every other frame passes unchanged, its `id:` (or its
// lack of one: `gap`) as it was.
import type { CapabilityJob, Job } from '../../protocol/api/types';
import type { CapabilitySee } from './capability';

/** The data fields a `state` reader does not see, by the event that may carry them. */
const HIDDEN: Readonly<Record<string, readonly string[]>> = {
  completed: ['result', 'resultTruncated'],
  failed: ['error'],
  retrying: ['error'],
};

/**
 * One frame as encodeMessage writes it (src/protocol/sse.ts: `event:`, `id:`, one `data:` line
 * of JSON, which JSON.stringify keeps on one line), with the hidden fields out of its data.
 */
function redactFrame(frame: string): string {
  const lines = frame.split('\n');
  const name = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
  const hidden = name === undefined ? undefined : HIDDEN[name];
  if (!hidden) return frame;
  const at = lines.findIndex((line) => line.startsWith('data: '));
  if (at < 0) return frame;
  const data = JSON.parse(lines[at]!.slice('data: '.length)) as Record<string, unknown>;
  if (!hidden.some((field) => field in data)) return frame;
  for (const field of hidden) delete data[field];
  lines[at] = `data: ${JSON.stringify(data)}`;
  return lines.join('\n');
}

/** SSE text of whole events (the hub's messages, a stream's opening) as a `state` reader gets it. */
export function redactFrames(text: string): string {
  // Every frame ends with the blank line that dispatches it: the last piece is the empty rest.
  return text.split('\n\n').map(redactFrame).join('\n\n');
}

/** Job `job` as the holder of a capability that sees `see` gets it from GET of the job. */
export function capabilityView(job: Job, see: CapabilitySee): CapabilityJob {
  const { id, queue, group, state, attempts, createdAt, runAt, expiresAt, startedAt, finishedAt, progress } = job;
  const view: CapabilityJob = { id, queue, group, state, attempts, createdAt };
  // Only what the job has: the optional fields stay absent rather than undefined in the JSON.
  const optional = { runAt, expiresAt, startedAt, finishedAt, progress };
  if (see === 'result') Object.assign(optional, { result: job.result, resultTruncated: job.resultTruncated, error: job.error });
  for (const [field, value] of Object.entries(optional)) if (value !== undefined) Object.assign(view, { [field]: value });
  return view;
}
