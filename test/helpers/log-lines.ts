// The Worker's log as a test reads it: workerd's stdout and stderr (where the Worker's console
// goes), split into lines, each JSON line parsed (docs/logs.md). Pass `output` to startWorker's
// runtimeOutputTo. workerd writes a line some moments after the request that caused it, so a
// test waits for the line it expects.
import { PassThrough } from 'node:stream';

export interface LogLine {
  time: string;
  level: 'debug' | 'info' | 'warn' | 'error';
  event: string;
  message: string;
  requestId?: string;
  [field: string]: unknown;
}

export interface LogCapture {
  /** Give to startWorker's `runtimeOutputTo`. */
  output: NodeJS.WritableStream;
  /** Every JSON line so far. */
  lines: LogLine[];
  /** Output lines that were not JSON (workerd's own). */
  other: string[];
  /** Resolves with the first line `match` accepts, waiting for it to be written. */
  waitFor(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
}

export function captureLog(): LogCapture {
  const output = new PassThrough();
  const lines: LogLine[] = [];
  const other: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    for (const text of parts) {
      if (text.trim() === '') continue;
      try {
        lines.push(JSON.parse(text) as LogLine);
      } catch {
        other.push(text);
      }
    }
    for (const wake of [...waiters]) wake();
  });
  return {
    output,
    lines,
    other,
    waitFor(match, timeoutMs = 15_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const wake = () => {
          const line = lines.find(match);
          if (!line) return;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(line);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no such log line after ${timeoutMs} ms; the log has:\n${lines.map((l) => JSON.stringify(l)).join('\n')}`));
        }, timeoutMs);
        waiters.add(wake);
      });
    },
  };
}
