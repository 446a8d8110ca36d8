// The Worker's log (docs/logs.md): one JSON object per line, written with the console method of
// its level. Workers Logs parses a JSON line and indexes each field, so a request can be found by
// its requestId and a job by its id; free text would be one unsearchable `message`. Every line is
// {"time","level","event","message",...fields}: `event` names the kind of line (request,
// delivery, outcome, scheduled, ...), `message` says it in a few words for a human reader.
// Handlers and the run layer both log, so this sits below them and imports nothing.

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'off'] as const;
/** GROUPQ_LOG_LEVEL: lines below it are dropped; `off` drops every line. */
export type LogLevel = (typeof LOG_LEVELS)[number];
type LineLevel = Exclude<LogLevel, 'off'>;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** Field values past this many characters are cut: one line stays well under Workers Logs' 256 KB. */
const MAX_TEXT_CHARS = 1000;
/** Lines of a stack a logged error keeps: where it was thrown, not the whole trace. */
const STACK_LINES = 4;

export type LogFields = Record<string, unknown>;

export interface Log {
  readonly level: LogLevel;
  /** Whether a line of `level` would be written: skip building fields that would be dropped. */
  enabled(level: LineLevel): boolean;
  debug(event: string, message: string, fields?: LogFields): void;
  info(event: string, message: string, fields?: LogFields): void;
  warn(event: string, message: string, fields?: LogFields): void;
  error(event: string, message: string, fields?: LogFields): void;
  /** The same log, each of its lines carrying `fields` too (a requestId, say). */
  with(fields: LogFields): Log;
}

/** What a logged error holds: its name, message, code (a QueueError's), stack head and cause. */
export interface ErrorFields {
  name: string;
  message: string;
  code?: string;
  stack?: string;
  cause?: ErrorFields | string;
}

const cut = (text: string) => (text.length > MAX_TEXT_CHARS ? `${text.slice(0, MAX_TEXT_CHARS)}…` : text);

/**
 * An error as JSON can hold it (JSON.stringify writes an Error as {}), its cause included two
 * levels down. A message is cut at MAX_TEXT_CHARS: an UpstashError's holds a whole script.
 */
export function errorFields(error: unknown, depth = 0): ErrorFields | string {
  if (!(error instanceof Error)) return cut(String(error));
  // @upstash/redis ends a failed command's message with ", command was: <the command>": a whole
  // script and its arguments, job data among them. Redis' own words are what the log keeps.
  const out: ErrorFields = { name: error.name, message: cut(error.message.split(', command was:')[0]!) };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') out.code = code;
  // The stack's first line repeats name and message.
  const stack = error.stack?.split('\n').slice(1, 1 + STACK_LINES).map((line) => line.trim()).join(' | ');
  if (stack) out.stack = stack;
  if (error.cause !== undefined && depth < 2) out.cause = errorFields(error.cause, depth + 1);
  return out;
}

/** A field as its line holds it: an Error as errorFields, long text cut. */
function fieldValue(value: unknown): unknown {
  if (value instanceof Error) return errorFields(value);
  if (typeof value === 'string') return cut(value);
  return value;
}

const WRITE: Record<LineLevel, (line: string) => void> = {
  debug: (line) => console.debug(line),
  info: (line) => console.info(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

function lineOf(level: LineLevel, event: string, message: string, base: LogFields, fields: LogFields): string {
  const line: LogFields = { time: new Date().toISOString(), level, event, message: cut(message) };
  for (const [key, value] of Object.entries(base)) line[key] = fieldValue(value);
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) line[key] = fieldValue(value);
  try {
    return JSON.stringify(line);
  } catch (error) {
    // A field JSON cannot hold (a cycle, a BigInt): the line still says what happened.
    return JSON.stringify({ time: line.time, level, event, message: line.message, logError: String(error) });
  }
}

/** A log writing lines of `level` and above, each carrying `base`. */
export function createLog(level: LogLevel, base: LogFields = {}): Log {
  const enabled = (at: LineLevel) => RANK[at] >= RANK[level];
  const write = (at: LineLevel) => (event: string, message: string, fields: LogFields = {}) => {
    if (enabled(at)) WRITE[at](lineOf(at, event, message, base, fields));
  };
  return {
    level,
    enabled,
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    with: (fields) => createLog(level, { ...base, ...fields }),
  };
}

/**
 * The log of code that was given none (a test, a benchmark building a dispatcher by hand): warnings
 * and errors only, so that what went wrong is still said.
 */
export const fallbackLog: Log = createLog('warn');
