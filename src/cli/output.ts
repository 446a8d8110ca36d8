// Where the CLI writes and how: the streams it is given (so tests run it in-process), one JSON
// document per answer with --json, and errors as one line (or one JSON object) on stderr.
import { GroupqError } from '../client';

/** A stream the CLI writes text to: process.stdout, or anything with `write` in tests. */
export interface TextSink {
  write(chunk: string): unknown;
  isTTY?: boolean;
  /** Terminal width and height, when the sink is a terminal. */
  columns?: number;
  rows?: number;
}

export interface CliIo {
  stdout: TextSink;
  stderr: TextSink;
  env: Record<string, string | undefined>;
  /** Overrides `stdout.isTTY`: whether the monitor may redraw in place. */
  isTTY?: boolean;
  /** Stops a running command (Ctrl-C in the bin); the monitor then exits 0. */
  signal?: AbortSignal;
  /** What `--data -` reads. @default process.stdin */
  stdin?: AsyncIterable<string | Uint8Array>;
}

/** Wrong invocation: exit code 2, and the help of the command it concerns. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    /** The command whose --help to point at, when known. */
    readonly command?: string,
  ) {
    super(message);
  }
}

/**
 * A command that refuses by itself, as the API would (exit 1, printed as API errors are):
 * `queue create` of a queue that exists.
 */
export class RefusedError extends Error {
  override readonly name = 'RefusedError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const EXIT_OK = 0;
export const EXIT_API_ERROR = 1;
export const EXIT_USAGE = 2;
/** Interrupted by Ctrl-C (128 + SIGINT), as shells report it. */
export const EXIT_INTERRUPTED = 130;

export class Output {
  constructor(
    readonly io: CliIo,
    /** --json: machine output. */
    readonly json: boolean,
  ) {}

  line(text = ''): void {
    this.io.stdout.write(`${text}\n`);
  }

  lines(texts: readonly string[]): void {
    for (const text of texts) this.line(text);
  }

  /** One JSON document on one line, so scripts can read a stream of them. */
  document(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  usageError(error: UsageError): number {
    if (this.json) {
      this.writeErrorJson({ code: 'USAGE', message: error.message });
    } else {
      const help = error.command ? `groupq ${error.command} --help` : 'groupq --help';
      this.io.stderr.write(`groupq: ${error.message}\n(see "${help}")\n`);
    }
    return EXIT_USAGE;
  }

  /** An API or network error; `subject` names the job or group it concerns when there are several. */
  apiError(error: unknown, subject?: string): number {
    const { code, message, details, requestId } = describe(error);
    if (this.json) {
      const extra = subject === undefined ? {} : { id: subject };
      // The Worker's request id: the one its log lines carry (docs/logs.md).
      const id = requestId === undefined ? {} : { requestId };
      this.writeErrorJson({ code, message, ...(details === undefined ? {} : { details }), ...id }, extra);
    } else {
      const prefix = subject === undefined ? '' : `${subject}: `;
      this.io.stderr.write(`groupq: ${prefix}${code}: ${message}${hint(code)}\n`);
      for (const issue of detailLines(code, details)) this.io.stderr.write(`  ${issue}\n`);
    }
    return EXIT_API_ERROR;
  }

  private writeErrorJson(error: { code: string; message: string; details?: unknown; requestId?: string }, extra: object = {}): void {
    this.io.stderr.write(`${JSON.stringify({ error, ...extra })}\n`);
  }
}

function describe(error: unknown): { code: string; message: string; details?: unknown; requestId?: string } {
  if (error instanceof GroupqError) return { code: error.code, message: error.message, details: error.details, requestId: error.requestId };
  if (error instanceof RefusedError) return { code: error.code, message: error.message };
  // Not an API answer: a bug or something the client did not wrap. Say what it was.
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL', message };
}

/** What to check for the errors a misconfigured CLI meets first. */
function hint(code: string): string {
  if (code === 'UNAUTHORIZED') return ' (check GROUPQ_TOKEN or --token)';
  if (code === 'NETWORK_ERROR') return ' (check GROUPQ_URL or --url, and that the Worker runs)';
  if (code === 'NOT_FOUND') return ' (is GROUPQ_URL the Worker\'s origin, and the Worker up to date?)';
  return '';
}

/**
 * Validation errors carry every issue as {path, message}; the message already names the first,
 * so the rest go on their own lines. Other details (limits) print as key=value.
 */
function detailLines(code: string, details: unknown): string[] {
  if (details === undefined || details === null) return [];
  if (code === 'VALIDATION_FAILED' && Array.isArray(details)) {
    if (details.length < 2) return [];
    return details.map((issue: { path?: string; message?: string }) => `${issue.path || 'body'}: ${issue.message}`);
  }
  if (typeof details === 'object' && !Array.isArray(details)) {
    return [Object.entries(details).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(' ')];
  }
  return [JSON.stringify(details)];
}
