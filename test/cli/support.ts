// Running the CLI in-process for the tests in test/cli: `main(argv, io)` with streams that
// collect what it writes, the Worker's URL and admin token as GROUPQ_URL/GROUPQ_TOKEN, and a
// terminal stand-in (isTTY, columns) for the monitor; and the suite of a file that runs it.
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { type CliIo, main } from '../../src/cli';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { ADMIN_TOKEN, type RunningWorker } from '../helpers/worker';
import { type HttpSuite, useHttpSuite } from '../http/support';

/** A Writable that keeps every byte written to it, optionally posing as a terminal. */
export class Collector extends Writable {
  text = '';
  isTTY: boolean;
  columns: number | undefined;
  rows: number | undefined;
  private readonly waiters: (() => void)[] = [];

  constructor({ isTTY = false, columns, rows }: { isTTY?: boolean; columns?: number; rows?: number } = {}) {
    super({ decodeStrings: false });
    this.isTTY = isTTY;
    this.columns = columns;
    this.rows = rows;
  }

  override _write(chunk: string | Buffer, _encoding: string, done: () => void): void {
    this.text += chunk.toString();
    for (const listener of this.waiters.splice(0)) listener();
    done();
  }

  /** Resolves once `test(text)` holds, checking after every write. */
  async until(test: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!test(this.text)) {
      if (Date.now() > deadline) throw new Error(`output never matched; got ${JSON.stringify(this.text)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
    return this.text;
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `groupq <argv>` in-process with `env` only (nothing from the test process leaks in). */
export async function cli(argv: string[], env: Record<string, string | undefined> = {}, extra: Partial<CliIo> = {}): Promise<CliResult> {
  const stdout = new Collector();
  const stderr = new Collector();
  const code = await main(argv, { stdout, stderr, env, ...extra });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** GROUPQ_URL and GROUPQ_TOKEN for the test's Worker. */
export function envFor(worker: RunningWorker): Record<string, string> {
  return { GROUPQ_URL: worker.url, GROUPQ_TOKEN: ADMIN_TOKEN };
}

export interface CliSuite extends HttpSuite {
  /** A loopback endpoint for the deliveries a test needs. */
  endpoint: Endpoint;
  /** GROUPQ_URL and GROUPQ_TOKEN for the suite's Worker. */
  env: Record<string, string>;
}

/**
 * useHttpSuite's stack and Worker, with an endpoint and the CLI's environment for that Worker,
 * for the calling file (beforeAll; stopped afterAll). Filled in once beforeAll has run.
 */
export function useCliSuite(): CliSuite {
  const suite = useHttpSuite() as CliSuite;
  beforeAll(async () => {
    suite.endpoint = await startEndpoint();
    suite.env = envFor(suite.worker);
  });
  afterAll(() => suite.endpoint?.close());
  return suite;
}

/** The one JSON document a --json run printed. */
export function json<T = any>(result: CliResult): T {
  const lines = result.stdout.trimEnd().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got ${JSON.stringify(result.stdout)}`);
  return JSON.parse(lines[0]!) as T;
}

/** The rows of a printed table, each split on runs of 2+ spaces, keyed by their first cell. */
export function rowsByFirstCell(text: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const cells = line.trim().split(/\s{2,}/);
    if (cells[0]) rows.set(cells[0], cells);
  }
  return rows;
}
