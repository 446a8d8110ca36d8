// What every command is given: the client, where to write, its positionals and flags. Commands
// live in commands.ts (jobs), queue-commands.ts, repeat-commands.ts and status-commands.ts.
import type { ClientOptions, GroupqClient } from '../client';
import type { FlagValues } from './args';
import type { Output } from './output';

export interface CommandContext {
  client: GroupqClient;
  /**
   * Another client for the same Worker and token, with other transport options: `health` asks
   * once (no retries) and reads the body of a 503 on its way through (its own fetch).
   */
  connect: (options: Pick<ClientOptions, 'retries' | 'fetch' | 'timeoutMs'>) => GroupqClient;
  out: Output;
  args: string[];
  flags: FlagValues;
  /** What `--data -` and `--config -` read (CliIo.stdin). */
  stdin?: AsyncIterable<string | Uint8Array>;
}

export type CommandRun = (ctx: CommandContext) => Promise<number>;

/** A string flag's value; undefined when not given. */
export const str = (flags: FlagValues, name: string): string | undefined => {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
};

/** "1 job", "3 jobs". */
export const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;
