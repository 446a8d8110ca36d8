// A queue's own commands: create it, change some of its settings, delete it, list its groups.
// `queue create` refuses a queue that exists: a PUT replaces the whole config, publish tokens and
// signing secrets included, which is what --replace is for; `queue configure` is the PATCH that
// keeps them.
import { GroupqError, type GroupSummary, type QueueClient, type QueueConfig, type QueueCounts } from '../client';
import { intFlag } from './args';
import { configPatch, createConfig } from './config-flags';
import { type CommandContext, type CommandRun, plural } from './context';
import { EXIT_OK, RefusedError, UsageError } from './output';
import { table } from './table';

/** A setting's value as one cell: text as it is, anything else as JSON. */
const valueText = (value: unknown): string => (typeof value === 'string' ? value : value === undefined ? '(none)' : JSON.stringify(value));

/** The config as SETTING VALUE rows, in the API's order. */
function configTable(config: QueueConfig): string[] {
  return table([{ header: 'SETTING' }, { header: 'VALUE' }], Object.entries(config).map(([field, value]) => [field, valueText(value)]));
}

async function exists(queue: QueueClient): Promise<boolean> {
  try {
    await queue.get();
    return true;
  } catch (error) {
    if (error instanceof GroupqError && error.code === 'QUEUE_NOT_FOUND') return false;
    throw error;
  }
}

async function create({ client, out, args, flags, stdin }: CommandContext): Promise<number> {
  const config = await createConfig({ flags, stdin });
  const queue = client.queue(args[0]!);
  // Read first, then written: two admins creating the same queue at once both write, the last
  // one's config stays; what this guards against is overwriting a queue by mistake.
  const replacing = await exists(queue);
  if (replacing && flags.replace !== true) {
    throw new RefusedError(
      'QUEUE_EXISTS',
      `queue ${queue.name} exists already: change some settings with "groupq queue configure", or replace its whole config with --replace`,
    );
  }
  const result = await queue.configure(config);
  if (out.json) {
    out.document(result);
    return EXIT_OK;
  }
  out.line(replacing ? `replaced the config of queue ${result.name}` : `created queue ${result.name}`);
  out.lines(configTable(result.config));
  return EXIT_OK;
}

async function configure({ client, out, args, flags, stdin }: CommandContext): Promise<number> {
  const patch = await configPatch({ flags, stdin });
  const queue = client.queue(args[0]!);
  // The config before, only to say what changed: the PATCH itself reads nothing of it.
  const before = (await queue.get()).config;
  const result = await queue.update(patch);
  if (out.json) {
    out.document(result);
    return EXIT_OK;
  }
  const after: Record<string, unknown> = result.config;
  const was: Record<string, unknown> = before;
  const changed = Object.keys(after).filter((field) => JSON.stringify(after[field]) !== JSON.stringify(was[field]));
  if (changed.length === 0) {
    out.line(`queue ${result.name}: nothing changed`);
    return EXIT_OK;
  }
  out.line(`queue ${result.name}: ${plural(changed.length, 'setting')} changed`);
  out.lines(table([{ header: 'SETTING' }, { header: 'BEFORE' }, { header: 'AFTER' }], changed.map((field) => [field, valueText(was[field]), valueText(after[field])])));
  return EXIT_OK;
}

/** "12 jobs (3 waiting, 9 completed)": the states that hold any. */
function jobsText(counts: QueueCounts): string {
  const states = (['waiting', 'delayed', 'active', 'completed', 'failed', 'cancelled', 'expired'] as const).filter((state) => counts[state] > 0);
  const total = states.reduce((sum, state) => sum + counts[state], 0);
  return total === 0 ? 'no jobs' : `${plural(total, 'job')} (${states.map((state) => `${counts[state]} ${state}`).join(', ')})`;
}

async function remove({ client, out, args, flags }: CommandContext): Promise<number> {
  // No prompt: a command that asks only on a terminal behaves differently in a script. --yes it is.
  if (flags.yes !== true) throw new UsageError('this deletes the queue with every job, group and repeat of it: pass --yes to do it', 'queue delete');
  const queue = client.queue(args[0]!);
  // What is about to go, read first: the DELETE answers nothing (and a queue that is not there
  // would be "deleted" without a word).
  const [info, repeats] = await Promise.all([queue.get(), queue.repeats.list()]);
  await queue.delete();
  if (out.json) out.document({ name: info.name, deleted: true, counts: info.counts, repeats: repeats.length });
  else out.line(`deleted queue ${info.name}: ${jobsText(info.counts)}, ${plural(info.counts.groups, 'group')} with jobs, ${plural(repeats.length, 'repeat')}`);
  return EXIT_OK;
}

async function groups({ client, out, args, flags }: CommandContext): Promise<number> {
  const limit = intFlag(flags, 'limit', 'groups', 1, 1000);
  const list = client.queue(args[0]!).groups(limit === undefined ? {} : { limit });
  let found: GroupSummary[];
  let cursor: string | null = null;
  if (flags.all) {
    found = [];
    for await (const group of list) found.push(group);
  } else {
    ({ groups: found, cursor } = await list);
  }
  if (out.json) {
    out.document({ groups: found, cursor });
    return EXIT_OK;
  }
  if (found.length === 0 && cursor === null) {
    // Delayed jobs join their groups only when due: a group holds waiting and active ones.
    out.line('no group holds a waiting or active job');
    return EXIT_OK;
  }
  // A page of the hash walk may hold none and still have more after it (docs/http-api.md#paging).
  if (found.length === 0) {
    out.line('(no group on this page; more groups: pass --all)');
    return EXIT_OK;
  }
  // ACTIVE: in flight out of the group's concurrency (its own limit, or the queue's groupConcurrency).
  const columns = [{ header: 'GROUP' }, { header: 'STATE' }, { header: 'WAITING', align: 'right' as const }, { header: 'ACTIVE', align: 'right' as const }];
  out.lines(table(columns, found.map((g) => [g.group, g.state, String(g.waiting), `${g.active}/${g.concurrency}`])));
  if (cursor !== null) out.line('(more groups: pass --all, or --limit up to 1000)');
  return EXIT_OK;
}

export const QUEUE_RUNS: Record<string, CommandRun> = {
  'queue create': create,
  'queue configure': configure,
  'queue delete': remove,
  groups,
};
