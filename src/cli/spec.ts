// The shape of a command's description (positionals, flags, help), shared by usage.ts, which
// lists the job commands, and usage-admin.ts, which lists the queue, group, repeat and status ones.

export interface FlagSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** May be given more than once (`--unset a --unset b`): its value is then a list. */
  multiple?: boolean;
  /** Shown in help, e.g. "--group <name>". */
  label: string;
  help: string;
}

export interface CommandSpec {
  /** One word, or two for a command of a family: 'queue create', 'repeats list'. */
  name: string;
  /** Positionals as help shows them: '<queue> <id...>'. */
  args: string;
  /** How many positionals; `Infinity` for "one or more ids". */
  min: number;
  max: number;
  summary: string;
  flags: Record<string, FlagSpec>;
  examples: string[];
  /** False for a route that is open (GET /health): no admin token needed. @default true */
  needsToken?: boolean;
}

export const flag = (type: FlagSpec['type'], label: string, help: string): FlagSpec => ({ type, label, help });
