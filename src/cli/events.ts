// `groupq events <queue> [--group g] [--job id]`: a queue's job events (or one group's, or one
// job's) printed as they happen, one line each, or each event's JSON with --json. It rides on the
// client's iterators (src/client/events.ts), which resume by themselves after a dropped
// connection; a line on stderr says so when one broke. It ends on Ctrl-C (exit 0: following is
// what it was asked to do, as the monitor), or with --job after the job's final event.
import { GroupqError, type StreamEvent } from '../client';
import { type CommandContext, str } from './context';
import { EXIT_OK, UsageError } from './output';
import { clockTime, oneLine, shortDuration } from './table';

/** HH:MM:SS.mmm in local time: several events may share a second. */
function eventTime(at: number): string {
  return `${clockTime(at)}.${String(new Date(at).getMilliseconds()).padStart(3, '0')}`;
}

const json = (value: unknown) => oneLine(JSON.stringify(value) ?? 'null', 60);

/** What changed, after the job's id and group: its state, attempt, and what goes with the kind. */
function detail(event: Exclude<StreamEvent, { event: 'gap' }>): string {
  const { data } = event;
  const attempt = `attempt ${data.attempt}`;
  switch (event.event) {
    case 'added':
      return event.data.runAt === undefined ? `${data.state}` : `${data.state} until ${clockTime(event.data.runAt)}`;
    case 'progress':
      return `${attempt} progress ${json(event.data.progress)}`;
    case 'retrying': {
      const error = event.data.error === undefined ? '' : `: ${oneLine(event.data.error, 60)}`;
      return `${attempt} failed${error}; next try at ${clockTime(event.data.retryAt)}`;
    }
    case 'completed':
      // An endpoint that answered no body gave null: nothing to show.
      return event.data.result === undefined || event.data.result === null ? attempt : `${attempt} result ${json(event.data.result)}`;
    case 'failed':
      return event.data.error === undefined ? attempt : `${attempt}: ${oneLine(event.data.error, 60)}`;
    case 'cancelled':
      return data.attempt === 0 ? 'before any attempt' : `after attempt ${data.attempt}`;
    case 'expired':
      return 'never started';
    default:
      return attempt;
  }
}

/** One line: when, what, which job of which group, and the detail. */
export function eventLine(event: StreamEvent): string {
  if (event.event === 'gap') {
    const { lastEventId, oldestEventId, at } = event.data;
    const oldest = oldestEventId === null ? 'none is held' : `the oldest held is ${oldestEventId}`;
    return `${eventTime(at)}  ${'gap'.padEnd(9)}  events after ${lastEventId} are no longer held (${oldest})`;
  }
  const { id, group, at } = event.data;
  return `${eventTime(at)}  ${event.event.padEnd(9)}  ${id}  ${group}  ${detail(event)}`;
}

export async function events({ client, out, args, flags }: CommandContext): Promise<number> {
  const group = str(flags, 'group');
  const job = str(flags, 'job');
  if (group !== undefined && job !== undefined) throw new UsageError('--group and --job do not go together: a job has one group', 'events');
  const queue = client.queue(args[0]!);
  const { signal } = out.io;
  const onRetry = (waitMs: number, error?: GroupqError) => {
    if (error && !out.json) out.io.stderr.write(`groupq: the stream broke (${error.code}: ${error.message}); resuming in ${shortDuration(waitMs)}\n`);
  };
  const options = { ...(signal && { signal }), onRetry };
  const stream = job === undefined ? queue.events({ ...options, ...(group !== undefined && { group }) }) : queue.jobEvents(job, options);
  try {
    for await (const event of stream) {
      if (out.json) out.document(event);
      else out.line(eventLine(event));
    }
  } catch (error) {
    // Ctrl-C: the end of following, not a failure.
    if (signal?.aborted && error instanceof GroupqError && error.code === 'ABORTED') return EXIT_OK;
    throw error;
  }
  return EXIT_OK;
}
