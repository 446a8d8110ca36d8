#!/usr/bin/env node
// The `groupq` command line: `main(argv, io)` parses, runs one command through GroupqClient and
// answers an exit code; tests call it in-process with their own streams. Run as the bin
// (dist/cli.js), it uses the process's streams and turns Ctrl-C into a stop of the command.
// The #! line above stays first in dist/cli.js: esbuild keeps an entry point's hashbang.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { version } from '../../package.json';
import { type ClientOptions, GroupqClient } from '../client';
import { type Invocation, parseInvocation, wantsJson } from './args';
import { RUNS } from './commands';
import { events } from './events';
import { monitor } from './monitor';
import { type CliIo, EXIT_INTERRUPTED, EXIT_OK, Output, UsageError } from './output';
import { STOPPED, unlessStopped } from './stop';
import { commandHelp, familyHelp, generalHelp } from './usage';

export type { CliIo } from './output';

export async function main(argv: string[], io: CliIo): Promise<number> {
  const out = new Output(io, wantsJson(argv));
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv, io.env);
  } catch (error) {
    if (error instanceof UsageError) return out.usageError(error);
    throw error;
  }
  if (invocation.kind === 'version') {
    out.line(version);
    return EXIT_OK;
  }
  if (invocation.kind === 'help') {
    const { command, family } = invocation;
    out.line(command ? commandHelp(command) : family ? familyHelp(family) : generalHelp());
    return EXIT_OK;
  }

  const { command, args, flags, url, token } = invocation;
  const client = new GroupqClient({ url, token });
  const connect = (options: Pick<ClientOptions, 'retries' | 'fetch' | 'timeoutMs'>) => new GroupqClient({ url, token, ...options });
  const ctx = { client, connect, out, args, flags, stdin: io.stdin };
  try {
    // The monitor and `events` watch the signal themselves: a stop is their normal end (exit 0,
    // the monitor's cursor restored). Any other command is interrupted by it.
    if (command.name === 'monitor') return await monitor(ctx);
    if (command.name === 'events') return await events(ctx);
    const code = await unlessStopped(RUNS[command.name]!(ctx), io.signal);
    return code === STOPPED ? EXIT_INTERRUPTED : code;
  } catch (error) {
    if (error instanceof UsageError) return out.usageError(error);
    return out.apiError(error);
  }
}

/** Whether this module is the program node was started with (the bin), not an import. */
function isEntryPoint(): boolean {
  const started = process.argv[1];
  if (!started) return false;
  try {
    // npm links the bin into node_modules/.bin: compare real paths, not the link.
    return realpathSync(started) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

async function runAsBin(): Promise<void> {
  const controller = new AbortController();
  // The first Ctrl-C stops the command (the monitor restores the cursor and exits 0, others exit
  // 130); a second one ends the process at once.
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(EXIT_INTERRUPTED);
    controller.abort();
  });
  // `groupq jobs q --all | head`: the reader left; that is not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_OK);
    throw error;
  });
  const code = await main(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  });
  process.exitCode = code;
  // A request left in flight by the stop would hold the process open until it times out.
  if (controller.signal.aborted) process.exit(code);
}

/**
 * `groupq serve`: the Node server (dist/server.js beside this file), not a client command. Its
 * settings come from the environment, as a Worker's bindings (docs/self-hosting.md).
 */
async function serve(argv: string[]): Promise<void> {
  if (argv.length > 0) {
    const help = argv.includes('--help') || argv.includes('-h');
    process[help ? 'stdout' : 'stderr'].write(`${help ? '' : `groupq serve: takes no arguments, got ${argv.join(' ')}\n`}${SERVE_HELP}\n`);
    process.exit(help ? EXIT_OK : 2);
  }
  const server = (await import(new URL('./server.js', import.meta.url).href)) as { main(): Promise<void> };
  await server.main();
}

const SERVE_HELP = [
  'Usage: groupq serve',
  '',
  'Runs groupq on this machine: the HTTP API, the dashboard and the scheduler (docs/self-hosting.md).',
  'Settings come from the environment: REDIS_URL (or UPSTASH_REDIS_REST_URL and _TOKEN),',
  'GROUPQ_ADMIN_TOKEN, GROUPQ_SIGNING_SECRET, GROUPQ_PUBLIC_URL, ...; PORT (8787), HOST (0.0.0.0),',
  'GROUPQ_CRON (the scheduler\'s schedule, "* * * * *").',
].join('\n');

if (isEntryPoint() && process.argv[2] === 'serve') {
  serve(process.argv.slice(3)).catch((error: unknown) => {
    process.stderr.write(`groupq serve: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
} else if (isEntryPoint()) {
  runAsBin().catch((error: unknown) => {
    process.stderr.write(`groupq: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
