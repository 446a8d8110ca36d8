// What the queue, group, repeat and status commands accept, for usage.ts's one table. The queue
// settings' flags are listed once here and shared by `queue create` and `queue configure`;
// config-flags.ts turns them into the config's fields.
import { type CommandSpec, type FlagSpec, flag } from './spec';

/** One flag per common setting of a queue's config (docs/http-api.md#queues); --config has them all. */
export const SETTING_FLAGS = {
  endpoint: flag('string', '--endpoint <url>', 'where jobs are POSTed: https (http on loopback where the Worker allows it)'),
  'callback-url': flag('string', '--callback-url <url>', "where each job's outcome is POSTed, unless the job names its own"),
  concurrency: flag('string', '--concurrency <n>', 'jobs in flight across all groups (default 10)'),
  'group-concurrency': flag('string', '--group-concurrency <n>', 'jobs of one group in flight at once (default 1)'),
  'max-attempts': flag('string', '--max-attempts <n>', 'attempts before a job is failed (default 3)'),
  'timeout-ms': flag('string', '--timeout-ms <ms>', 'how long one delivery may take (default 30000)'),
  'keep-completed': flag('string', '--keep-completed <n>', 'completed jobs kept (default 0: deleted at once)'),
  'keep-failed': flag('string', '--keep-failed <n>', 'failed jobs kept, and as many cancelled and as many expired (default 1000)'),
  'ordering-window-ms': flag('string', '--ordering-window-ms <ms>', 'a job does not start before orderMs + this (default 0)'),
  'dedup-window-ms': flag('string', '--dedup-window-ms <ms>', 'how long a job id stays known after its job ends (default 300000)'),
  'max-jobs': flag('string', '--max-jobs <n>', 'waiting + delayed jobs the queue may hold (default 1000000)'),
  'max-payload-bytes': flag('string', '--max-payload-bytes <n>', "bound on each job's data as JSON bytes (default 262144)"),
  backpressure: flag('string', '--backpressure <what>', "what an endpoint's 429 holds: job (default), group or queue"),
  'rate-limit': flag('string', '--rate-limit <max>/<ms>', 'deliveries started queue-wide per window, e.g. 100/1000; none: no limit (default)'),
  'group-rate-limit': flag('string', '--group-rate-limit <max>/<ms>', 'the same for each group on its own; none: no limit (default)'),
  batch: flag('string', '--batch <max>[/<ms>]', "up to <max> of a group's jobs per delivery, its head waiting up to <ms> for them (docs/batches.md); none: one job per delivery (default)"),
} satisfies Record<string, FlagSpec>;

const configFlag = (help: string) => flag('string', '--config <json>', `${help}; @<file> reads a file, - standard input`);

export const QUEUE_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'queue create',
    args: '<name>',
    min: 1,
    max: 1,
    summary: 'create a queue (refused when it exists, unless --replace); prints its config',
    flags: {
      ...SETTING_FLAGS,
      partitions: flag('string', '--partitions <n>', "partitions the queue's groups are spread over (default 1; fixed once created)"),
      config: configFlag('the whole config as JSON (docs/http-api.md#queues); the flags above win over its fields'),
      replace: flag('boolean', '--replace', "replace an existing queue's whole config: fields not given take their defaults, publish tokens and signing secrets go"),
    },
    examples: [
      'groupq queue create orders --endpoint https://api.example.com/jobs --concurrency 20 --keep-completed 100',
      'groupq queue create orders --config @orders-queue.json',
      'groupq queue create orders --config @orders-queue.json --max-attempts 5',
    ],
  },
  {
    name: 'queue configure',
    args: '<name>',
    min: 1,
    max: 1,
    summary: 'change only the settings named (PATCH): the rest, publish tokens included, stays',
    flags: {
      ...SETTING_FLAGS,
      config: configFlag('a JSON merge patch of the config: its fields change, null puts one back to its default'),
      unset: { ...flag('string', '--unset <field>', 'put a field back to its default, by its config name (rateLimit, callbackUrl, ...); repeat it or list them with commas'), multiple: true },
    },
    examples: [
      'groupq queue configure orders --concurrency 50',
      'groupq queue configure orders --rate-limit 200/1000 --unset callbackUrl',
      `groupq queue configure orders --config '{"backoff":{"type":"fixed","delayMs":5000}}'`,
    ],
  },
  {
    name: 'queue delete',
    args: '<name>',
    min: 1,
    max: 1,
    summary: 'delete a queue with every job, group and repeat of it; --yes is required (no prompt)',
    flags: { yes: flag('boolean', '--yes', 'required: yes, delete it (it cannot be undone)') },
    examples: ['groupq queue delete orders --yes'],
  },
];

export const GROUPS_COMMAND: CommandSpec = {
  name: 'groups',
  args: '<queue>',
  min: 1,
  max: 1,
  summary: "list the groups holding jobs: state, waiting, active out of the group's concurrency",
  flags: {
    limit: flag('string', '--limit <n>', 'groups per page (default 50, at most 1000)'),
    all: flag('boolean', '--all', 'every page, not just the first'),
  },
  examples: ['groupq groups orders', 'groupq groups orders --all --json'],
};

export const REPEAT_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'repeats list',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: "list the queue's repeatable jobs: group, schedule, next run, runs so far",
    flags: {},
    examples: ['groupq repeats list orders', 'groupq repeats list orders --json'],
  },
  {
    name: 'repeats put',
    args: '<queue> <key>',
    min: 2,
    max: 2,
    summary: 'create or replace the repeatable job <key>: a run every --every-ms, or at each --cron time',
    flags: {
      group: flag('string', '--group <name>', "the runs' group (required)"),
      cron: flag('string', '--cron <pattern>', 'a 5-field cron pattern, e.g. "0 9 * * 1-5" (or --every-ms)'),
      tz: flag('string', '--tz <zone>', 'the IANA time zone of --cron (default UTC)'),
      'every-ms': flag('string', '--every-ms <ms>', 'a run every this many ms, at least 1000 (or --cron)'),
      data: flag('string', '--data <json>', 'each run\'s data as JSON (default null); @<file> reads a file, - standard input'),
      'start-at': flag('string', '--start-at <time>', 'no run before: epoch ms or an ISO 8601 time (2030-01-31T09:00:00Z)'),
      'end-at': flag('string', '--end-at <time>', 'no run after: epoch ms or an ISO 8601 time'),
      limit: flag('string', '--limit <n>', 'stop after this many runs'),
    },
    examples: [
      `groupq repeats put orders nightly-report --cron '0 2 * * *' --tz Europe/Berlin --group reports --data '{"kind":"daily"}'`,
      'groupq repeats put orders heartbeat --every-ms 60000 --group heartbeat --limit 100',
    ],
  },
  {
    name: 'repeats delete',
    args: '<queue> <key>',
    min: 2,
    max: 2,
    summary: 'stop a repeatable job (runs already enqueued stay)',
    flags: {},
    examples: ['groupq repeats delete orders nightly-report'],
  },
];

export const STATUS_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'metrics',
    args: '<queue>',
    min: 1,
    max: 1,
    summary: "the last hour's completed, failed and retried jobs: totals, and the last minutes one by one",
    flags: { minutes: flag('string', '--minutes <n>', 'the last minutes to show one by one, and to total, 1 to 60 (default 10)') },
    examples: ['groupq metrics orders', 'groupq metrics orders --minutes 60', 'groupq metrics orders --json'],
  },
  {
    name: 'health',
    args: '',
    min: 0,
    max: 0,
    summary: "whether the Worker answers and reaches its databases: ok or down (exit 1 when not ok)",
    flags: {},
    examples: ['groupq health', 'groupq health --json'],
    needsToken: false,
  },
];
