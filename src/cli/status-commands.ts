// How things stand: a queue's last hour (`metrics`) and the Worker's own health (`health`).
import { GroupqError, type MinuteMetrics } from '../client';
import { intFlag } from './args';
import type { CommandContext, CommandRun } from './context';
import { EXIT_API_ERROR, EXIT_OK } from './output';
import { clockTime, table } from './table';

const COUNTERS = ['completed', 'failed', 'retried'] as const;
const counterColumns = COUNTERS.map((counter) => ({ header: counter.toUpperCase(), align: 'right' as const }));

function sumOf(minutes: readonly MinuteMetrics[]): string[] {
  return COUNTERS.map((counter) => String(minutes.reduce((sum, minute) => sum + minute[counter], 0)));
}

async function metrics({ client, out, args, flags }: CommandContext): Promise<number> {
  const shown = intFlag(flags, 'minutes', 'metrics', 1, 60) ?? 10;
  const minutes = await client.queue(args[0]!).metrics();
  if (out.json) {
    out.document({ minutes });
    return EXIT_OK;
  }
  // 60 minutes, oldest first, the current one (so far) last.
  const last = minutes.slice(-shown);
  const totals = [['last hour', ...sumOf(minutes)]];
  if (last.length < minutes.length) totals.push([`last ${shown} min`, ...sumOf(last)]);
  out.lines(table([{ header: 'PERIOD' }, ...counterColumns], totals));
  out.line();
  const rows = last.map((minute, i) => [
    `${clockTime(minute.at).slice(0, 5)}${i === last.length - 1 ? ' (now)' : ''}`,
    ...COUNTERS.map((counter) => String(minute[counter])),
  ]);
  out.lines(table([{ header: 'MINUTE' }, ...counterColumns], rows));
  return EXIT_OK;
}

/** GET /health's document (healthSchema in src/protocol/api/responses.ts): `databases` with a pool. */
interface Health {
  ok: boolean;
  redis: string;
  databases?: string[];
}

/** The health document of a 503's body; undefined when it is something else (a proxy's page). */
function healthOf(text: string): Health | undefined {
  try {
    const body = JSON.parse(text) as Partial<Health>;
    return typeof body.ok === 'boolean' && typeof body.redis === 'string' ? (body as Health) : undefined;
  } catch {
    return undefined;
  }
}

async function health({ connect, out }: CommandContext): Promise<number> {
  // A database down is a 503 with the same document, which the client throws as
  // REDIS_UNAVAILABLE: its body is kept here on its way through. Asked once: a health check
  // says how things are now, not after three retries.
  let down: Health | undefined;
  const client = connect({
    retries: 0,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 503) down = healthOf(await response.clone().text());
      return response;
    },
  });
  let answer: Health;
  try {
    answer = await client.health();
  } catch (error) {
    if (!(error instanceof GroupqError) || error.status !== 503 || down === undefined) throw error;
    answer = down;
  }
  if (out.json) {
    out.document(answer);
  } else {
    const databases = answer.databases ? `databases ${answer.databases.map((state, i) => `${i} ${state}`).join(', ')}` : `redis ${answer.redis}`;
    out.line(`${answer.ok ? 'ok' : 'down'} (${databases})`);
  }
  return answer.ok ? EXIT_OK : EXIT_API_ERROR;
}

export const STATUS_RUNS: Record<string, CommandRun> = { metrics, health };
