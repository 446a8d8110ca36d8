// What each command accepts (positionals, flags) and the help text built from it: one table, so
// the parser and --help cannot disagree. The job commands are listed here, the queue, group,
// repeat and status ones in usage-admin.ts.
import { type CommandSpec, type FlagSpec, flag } from './spec';
import { GROUPS_COMMAND, QUEUE_COMMANDS, REPEAT_COMMANDS, STATUS_COMMANDS } from './usage-admin';

export type { CommandSpec, FlagSpec } from './spec';

export const GLOBAL_FLAGS: Record<string, FlagSpec> = {
  url: flag('string', '--url <url>', "the Worker's origin (default: $GROUPQ_URL)"),
  token: flag('string', '--token <token>', 'admin token (default: $GROUPQ_TOKEN)'),
  json: flag('boolean', '--json', 'machine output: one JSON document on stdout, errors as JSON on stderr'),
  help: { ...flag('boolean', '--help, -h', 'show help'), short: 'h' },
  version: { ...flag('boolean', '--version, -V', 'print the version'), short: 'V' },
};

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'queues',
    args: '',
    min: 0,
    max: 0,
    summary: 'list queues with their counts',
    flags: {},
    examples: ['groupq queues', 'groupq queues --json'],
  },
  ...QUEUE_COMMANDS,
  {
    name: 'monitor',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'live counts, groups and throughput, redrawn in place (Ctrl-C quits)',
    flags: {
      interval: flag('string', '--interval <ms>', 'frames follow changes, at most one per <ms> (default 1000, 100 to 3600000); without the event stream, one every <ms>'),
      once: flag('boolean', '--once', 'print one frame and exit'),
    },
    examples: ['groupq monitor orders', 'groupq monitor orders --once', 'groupq monitor orders --json --interval 5000'],
  },
  {
    name: 'events',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: "print the queue's job events as they happen, one line each (Ctrl-C quits)",
    flags: {
      group: flag('string', '--group <name>', "only this group's jobs"),
      job: flag('string', '--job <id>', "only this job's events, from its state now; ends after its final event"),
    },
    examples: ['groupq events orders', 'groupq events orders --group user:42', 'groupq events orders --job 7Hq2LmX0aPzR4kTc --json'],
  },
  {
    name: 'enqueue',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'add one job; prints its id and state',
    flags: {
      group: flag('string', '--group <name>', 'the job\'s group (required)'),
      data: flag('string', '--data <json>', 'the job\'s data as JSON (default null); @<file> reads a file, - standard input'),
      id: flag('string', '--id <id>', 'your id: enqueueing the same id twice adds one job'),
      delay: flag('string', '--delay <ms>', 'do not run before this many ms from now'),
      'order-ms': flag('string', '--order-ms <n>', 'order inside the group (default: now)'),
      'callback-url': flag('string', '--callback-url <url>', 'where its outcome is POSTed when it ends'),
      priority: flag('string', '--priority <n>', 'across groups, higher starts first: -1000 to 1000 (default 0; negative: --priority=-5)'),
      ttl: flag('string', '--ttl <ms>', 'not started within this many ms, it ends expired and never runs (at most 30 days)'),
      'debounce-key': flag('string', '--debounce-key <key>', 'collapse into the waiting job with this key, which takes this data'),
      'debounce-ms': flag('string', '--debounce-ms <ms>', 'with --debounce-key: start this long after the last enqueue'),
      'debounce-max-ms': flag('string', '--debounce-max-ms <ms>', 'with --debounce-key: start at most this long after the first'),
    },
    examples: [
      `groupq enqueue orders --group user:42 --data '{"sku":"A1"}'`,
      `groupq enqueue orders --group user:42 --data @order.json`,
      `jq -c .order event.json | groupq enqueue orders --group user:42 --data -`,
      `groupq enqueue orders --group user:42 --priority 10`,
      `groupq enqueue search --group user:42 --debounce-key reindex:42 --debounce-ms 2000 --debounce-max-ms 10000`,
    ],
  },
  {
    name: 'jobs',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'list jobs in one state',
    flags: {
      state: flag('string', '--state <state>', 'waiting (default), delayed, active, completed, failed, cancelled or expired'),
      group: flag('string', '--group <name>', 'only this group\'s jobs'),
      limit: flag('string', '--limit <n>', 'jobs per page (default 50, at most 1000)'),
      all: flag('boolean', '--all', 'every page, not just the first'),
    },
    examples: ['groupq jobs orders --state failed', 'groupq jobs orders --group user:42 --all --json'],
  },
  {
    name: 'job',
    args: '<queue> <id>',
    min: 2,
    max: 2,
    summary: 'show one job in full (JSON)',
    flags: {
      wait: flag('string', '--wait <ms>', 'wait up to this long for the job to finish (completed, failed, cancelled, expired)'),
    },
    examples: ['groupq job orders 01J2X...', 'groupq job orders 01J2X... --wait 60000'],
  },
  {
    name: 'retry',
    args: '<queue> <id...>',
    min: 2,
    max: Infinity,
    summary: 'run failed jobs again',
    flags: {},
    examples: ['groupq retry orders job-1 job-2'],
  },
  {
    name: 'remove',
    args: '<queue> <id...>',
    min: 2,
    max: Infinity,
    summary: 'delete jobs (not while active)',
    flags: {},
    examples: ['groupq remove orders job-1'],
  },
  {
    name: 'retry-all',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'run every failed job again; prints how many',
    flags: {},
    examples: ['groupq retry-all orders'],
  },
  {
    name: 'clean',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'delete every job of a finished state; prints how many',
    flags: { state: flag('string', '--state <state>', 'completed, failed, cancelled or expired (required)') },
    examples: ['groupq clean orders --state completed'],
  },
  {
    name: 'promote',
    args: '<queue> <id>',
    min: 2,
    max: 2,
    summary: 'run a delayed job now',
    flags: {},
    examples: ['groupq promote orders job-1'],
  },
  {
    name: 'cancel',
    args: '<queue> <id...>',
    min: 2,
    max: Infinity,
    summary: "cancel jobs that have not finished (an active one's lease is revoked)",
    flags: {},
    examples: ['groupq cancel orders job-1 job-2'],
  },
  {
    name: 'repair',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'bring back jobs a failed script left in no index (docs/http-api.md#repair)',
    flags: {},
    examples: ['groupq repair orders'],
  },
  {
    name: 'partitions',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: "the queue's partitions: the database each lives on, and its counts",
    flags: {},
    examples: ['groupq partitions orders', 'groupq partitions orders --json'],
  },
  {
    name: 'move',
    args: '<queue> <partition>',
    min: 2,
    max: 2,
    summary: 'move a partition to another database of the pool while the queue runs (docs/scaling-out.md#moving-a-partition)',
    flags: { database: flag('string', '--database <index>', 'the database of the pool it moves to') },
    examples: ['groupq move orders 3 --database 2'],
  },
  {
    name: 'pause',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'stop deliveries of the queue, or of one group',
    flags: { group: flag('string', '--group <name>', 'pause only this group') },
    examples: ['groupq pause orders', 'groupq pause orders --group user:42'],
  },
  {
    name: 'resume',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: 'restart deliveries of the queue, or of one group',
    flags: { group: flag('string', '--group <name>', 'resume only this group') },
    examples: ['groupq resume orders', 'groupq resume orders --group user:42'],
  },
  {
    name: 'group-limits',
    args: '<queue> <group>',
    min: 2,
    max: 2,
    summary: "set one group's concurrency and rate limit, or clear them (the queue's apply)",
    flags: {
      concurrency: flag('string', '--concurrency <n>', 'jobs of the group in flight at once, 1 to 1000'),
      'rate-max': flag('string', '--rate-max <n>', 'with --rate-period-ms: at most this many starts per period'),
      'rate-period-ms': flag('string', '--rate-period-ms <ms>', 'the rate limit\'s period, 1000 to 86400000'),
      'no-rate-limit': flag('boolean', '--no-rate-limit', 'no rate limit for this group, whatever the queue\'s groupRateLimit'),
      clear: flag('boolean', '--clear', 'delete the group\'s limits'),
    },
    examples: [
      'groupq group-limits orders user:42 --concurrency 3',
      'groupq group-limits orders user:42 --rate-max 10 --rate-period-ms 1000',
      'groupq group-limits orders user:42 --clear',
    ],
  },
  GROUPS_COMMAND,
  ...REPEAT_COMMANDS,
  ...STATUS_COMMANDS,
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name);
}

/** The commands of a family ('queue': queue create, configure, delete); none when `word` leads none. */
export function familyOf(word: string): CommandSpec[] {
  return COMMANDS.filter((command) => command.name.startsWith(`${word} `));
}

/** "create, configure or delete": what may follow a family's word. */
export function familyChoices(word: string): string {
  const names = familyOf(word).map((command) => command.name.slice(word.length + 1));
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

function flagLines(flags: Record<string, FlagSpec>): string[] {
  const specs = Object.values(flags);
  const width = Math.max(...specs.map((spec) => spec.label.length));
  return specs.map((spec) => `  ${spec.label.padEnd(width)}  ${spec.help}`);
}

function commandLines(commands: readonly CommandSpec[]): string[] {
  const width = Math.max(...commands.map((c) => `${c.name} ${c.args}`.length));
  return commands.map((c) => `  ${`${c.name} ${c.args}`.padEnd(width)}  ${c.summary}`);
}

/** `groupq queue --help`: the commands of the family. */
export function familyHelp(word: string): string {
  return [
    `groupq ${word}: ${familyChoices(word)}`,
    '',
    `Usage: groupq ${word} <${familyOf(word).map((command) => command.name.slice(word.length + 1)).join('|')}> [args] [flags]`,
    '',
    'Commands:',
    ...commandLines(familyOf(word)),
    '',
    `Run "groupq ${word} <command> --help" for a command's flags.`,
  ].join('\n');
}

/** `--`, read by node's parseArgs: an id groupq made never starts with '-', one given may. */
const END_OF_FLAGS = '"--" ends the flags: what follows is arguments, so an id led by "-" goes after it (groupq job orders -- -lxi4Tq...).';

export function generalHelp(): string {
  return [
    'groupq: manage groupq queues from a terminal',
    '',
    'Usage: groupq <command> [args] [flags]',
    '',
    'Commands:',
    ...commandLines(COMMANDS),
    '',
    'Flags for every command:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    END_OF_FLAGS,
    'GROUPQ_URL and GROUPQ_TOKEN (or --url/--token) say which Worker to talk to.',
    '"groupq serve" runs groupq itself on this machine (docs/self-hosting.md).',
    'Exit codes: 0 ok, 1 the API refused or could not be reached, 2 wrong usage.',
    'Run "groupq <command> --help" for a command\'s flags.',
  ].join('\n');
}

export function commandHelp(command: CommandSpec): string {
  const own = Object.keys(command.flags).length > 0 ? ['', 'Flags:', ...flagLines(command.flags)] : [];
  return [
    `groupq ${command.name}: ${command.summary}`,
    '',
    `Usage: groupq ${command.name}${command.args ? ` ${command.args}` : ''} [flags]`,
    ...own,
    '',
    'Global flags:',
    ...flagLines(GLOBAL_FLAGS),
    ...(command.max > 0 ? ['', END_OF_FLAGS] : []),
    '',
    'Examples:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}
