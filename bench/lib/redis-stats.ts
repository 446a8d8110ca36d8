// Reading Redis' own counters: INFO commandstats (calls per command, including the commands run
// inside scripts, which is what Upstash bills) and INFO memory.
import type { RespClient } from '../../scripts/resp.mjs';
import { sleep } from './workload';

/** Calls per command name (lower case; subcommands as Redis names them, e.g. `config|resetstat`). */
export type CommandCounts = Record<string, number>;

// The measuring itself: CONFIG RESETSTAT and INFO are ours, not the engine's.
const OWN_COMMANDS = new Set(['config', 'info']);

async function info(admin: RespClient, section: string): Promise<Record<string, string>> {
  const text = String(await admin.call(['INFO', section]));
  const fields: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}

export async function resetStats(admin: RespClient): Promise<void> {
  await admin.call(['CONFIG', 'RESETSTAT']);
}

/** Calls per command since the last RESETSTAT, without the measuring commands. */
export async function commandStats(admin: RespClient): Promise<CommandCounts> {
  const counts: CommandCounts = {};
  for (const [key, value] of Object.entries(await info(admin, 'commandstats'))) {
    const name = key.replace(/^cmdstat_/, '');
    if (OWN_COMMANDS.has(name.split('|')[0]!)) continue;
    const calls = /(?:^|,)calls=(\d+)/.exec(value);
    if (calls) counts[name] = Number(calls[1]);
  }
  return counts;
}

/** `after - before`, per command, dropping commands that did not run. */
export function diffCounts(before: CommandCounts, after: CommandCounts): CommandCounts {
  const out: CommandCounts = {};
  for (const [name, calls] of Object.entries(after)) {
    const delta = calls - (before[name] ?? 0);
    if (delta !== 0) out[name] = delta;
  }
  return out;
}

/** The commands `run` caused (script-internal ones included), on a Redis that serves nothing else meanwhile. */
export async function countsOf(admin: RespClient, run: () => Promise<unknown>): Promise<CommandCounts> {
  const before = await commandStats(admin);
  await run();
  return diffCounts(before, await commandStats(admin));
}

export function addCounts(into: CommandCounts, more: CommandCounts): CommandCounts {
  for (const [name, calls] of Object.entries(more)) into[name] = (into[name] ?? 0) + calls;
  return into;
}

export function totalCalls(counts: CommandCounts): number {
  return Object.values(counts).reduce((sum, calls) => sum + calls, 0);
}

/** Calls per unit (per job, per tick), largest first, rounded to 3 decimals. */
export function perUnit(counts: CommandCounts, units: number): CommandCounts {
  return Object.fromEntries(
    Object.entries(counts)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([name, calls]) => [name, round(calls / units, 3)]),
  );
}

export function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export async function memoryInfo(admin: RespClient): Promise<{ usedMemory: number; dataset: number; overhead: number }> {
  const fields = await info(admin, 'memory');
  return {
    usedMemory: Number(fields.used_memory),
    dataset: Number(fields.used_memory_dataset),
    overhead: Number(fields.used_memory_overhead),
  };
}

// Long enough for Redis' cron to shrink the bridge connection's query buffer after a big batch.
export const QUIET_MS = 2500;

/** used_memory (and the dataset part) on a quiet server, after MEMORY PURGE. */
export async function quietUsedMemory(admin: RespClient): Promise<{ usedMemory: number; dataset: number; purged: boolean }> {
  await sleep(QUIET_MS);
  // A deleted queue's keys are freed in the background (UNLINK): wait until that is done, or the
  // memory it still returns would be taken off what the next row adds.
  for (let i = 0; i < 600 && Number((await info(admin, 'memory')).lazyfree_pending_objects ?? 0) > 0; i++) await sleep(50);
  const purged = await memoryPurge(admin);
  await sleep(100);
  const { usedMemory, dataset } = await memoryInfo(admin);
  return { usedMemory, dataset, purged };
}

/** CPU time Redis' process has used (user + system), in milliseconds. */
export async function redisCpuMs(admin: RespClient): Promise<number> {
  const fields = await info(admin, 'cpu');
  return (Number(fields.used_cpu_user) + Number(fields.used_cpu_sys)) * 1000;
}

export async function serverInfo(admin: RespClient): Promise<{ version: string; allocator: string; appendonly: boolean }> {
  const server = await info(admin, 'server');
  const memory = await info(admin, 'memory');
  const persistence = await info(admin, 'persistence');
  return {
    version: server.redis_version ?? 'unknown',
    allocator: memory.mem_allocator ?? 'unknown',
    appendonly: persistence.aof_enabled === '1',
  };
}

/** Asks the allocator to return dirty pages; a no-op where MEMORY PURGE is unsupported. */
export async function memoryPurge(admin: RespClient): Promise<boolean> {
  try {
    await admin.call(['MEMORY', 'PURGE']);
    return true;
  } catch {
    return false;
  }
}

/** Exact MEMORY USAGE of a key (SAMPLES 0: every element, not an estimate); 0 when absent. */
export async function keyBytes(admin: RespClient, key: string): Promise<number> {
  const reply = await admin.call(['MEMORY', 'USAGE', key, 'SAMPLES', '0']);
  return typeof reply === 'number' ? reply : 0;
}

export async function keyEncoding(admin: RespClient, key: string): Promise<string> {
  try {
    return String(await admin.call(['OBJECT', 'ENCODING', key]));
  } catch {
    return 'none';
  }
}
