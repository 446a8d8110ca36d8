// The batch rows' count of REST commands by script (bench/lib/batch.ts): INFO commandstats names
// the commands a script runs but not the script, so the bridge's requests are looked at as they
// come (startE2eStack's observeBridge), and each EVALSHA or EVAL is named by its script: the
// lead can see which call a figure per job comes from (settle, enqueue, tick...).
import { createHash } from 'node:crypto';
import type { ObservedRequest } from '../../scripts/rest-bridge.mjs';
import { scripts } from '../../src/lua/scripts.generated';
import type { CommandCounts } from './redis-stats';

/** The script of each SHA-1 the client may send (with and without Upstash's key-locking flag). */
const SCRIPT_OF_SHA = new Map<string, string>(Object.values(scripts).flatMap((s) => [[s.sha1, s.name], [s.plainSha1, s.name]] as [string, string][]));

const nameOf = (sha: string) => `script ${SCRIPT_OF_SHA.get(sha.toLowerCase()) ?? 'unknown'}`;

/** Counts the REST bridge's commands by script (EVALSHA, or EVAL by its source's SHA-1) or by command name. */
export function scriptCounter() {
  const counts: CommandCounts = {};
  const count = (command: unknown) => {
    if (!Array.isArray(command) || typeof command[0] !== 'string') return;
    const name = command[0].toLowerCase();
    const arg = String(command[1]);
    const key = name.startsWith('evalsha') ? nameOf(arg) : name.startsWith('eval') ? nameOf(createHash('sha1').update(arg).digest('hex')) : name;
    counts[key] = (counts[key] ?? 0) + 1;
  };
  return {
    counts,
    observe(request: ObservedRequest) {
      const body = request.body;
      // A pipeline or a transaction is a list of commands; one command is a list of strings.
      if (Array.isArray(body) && Array.isArray(body[0])) body.forEach(count);
      else count(body);
    },
    reset() {
      for (const key of Object.keys(counts)) delete counts[key];
    },
  };
}
