// A queue's config from the command line, for `queue create` (PUT: a whole config) and `queue
// configure` (PATCH: a JSON merge patch): --config's document, the setting flags over it, and
// --unset's nulls. Only the form is checked here (whole numbers, <max>/<ms>, known field names);
// ranges and URLs are the server's to check, with the same messages as for any client.
import type { QueueConfigInput, QueueConfigPatch } from '../client';
import { type FlagValues, intFlag, jsonFlag } from './args';
import { str } from './context';
import { UsageError } from './output';
import type { SETTING_FLAGS } from './usage-admin';

type Field = keyof QueueConfigInput;

/**
 * Every field of the config, for --unset's check. `satisfies` fails the build when the config
 * gains or loses a field and this list is not changed with it.
 */
const CONFIG_FIELDS = {
  endpoint: true, callbackUrl: true, concurrency: true, timeoutMs: true, maxAttempts: true, backoff: true, orderingWindowMs: true,
  keepCompleted: true, keepFailed: true, groupConcurrency: true, rateLimit: true, groupRateLimit: true, dedupWindowMs: true,
  backpressure: true, maxPayloadBytes: true, allowedOrigins: true, publishTokens: true, maxJobs: true, maxDelayMs: true,
  maxThrottleMs: true, publishMaxDelayMs: true, publishCallbackOrigins: true, publishRateLimit: true, signingSecret: true,
  signingSecretNext: true, partitions: true,
  publishTtlMs: true, publishEvents: true,
  publishTokenRateLimit: true, publishIpv6Prefix: true, publishMaxJobs: true, publishMaxDataBytes: true, maxBytes: true,
  batch: true,
} satisfies Record<Field, true>;

/** Each setting flag's field and how its text reads; `satisfies` keeps it in step with SETTING_FLAGS. */
const SETTINGS = {
  endpoint: ['endpoint', 'text'],
  'callback-url': ['callbackUrl', 'text'],
  concurrency: ['concurrency', 'whole'],
  'group-concurrency': ['groupConcurrency', 'whole'],
  'max-attempts': ['maxAttempts', 'whole'],
  'timeout-ms': ['timeoutMs', 'whole'],
  'keep-completed': ['keepCompleted', 'whole'],
  'keep-failed': ['keepFailed', 'whole'],
  'ordering-window-ms': ['orderingWindowMs', 'whole'],
  'dedup-window-ms': ['dedupWindowMs', 'whole'],
  'max-jobs': ['maxJobs', 'whole'],
  'max-payload-bytes': ['maxPayloadBytes', 'whole'],
  backpressure: ['backpressure', 'text'],
  'rate-limit': ['rateLimit', 'rate'],
  'group-rate-limit': ['groupRateLimit', 'rate'],
  partitions: ['partitions', 'whole'],
  batch: ['batch', 'batch'],
} as const satisfies Record<keyof typeof SETTING_FLAGS | 'partitions', readonly [Field, 'text' | 'whole' | 'rate' | 'batch']>;

/** `100/1000` (100 per second), or `none`. */
function rateOf(flags: FlagValues, name: string, command: string): { max: number; periodMs: number } | null {
  const raw = str(flags, name)!;
  if (raw.trim() === 'none') return null;
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(raw);
  if (!match) throw new UsageError(`--${name} is <max>/<ms>, e.g. 100/1000 for 100 a second, or none (got "${raw}")`, command);
  return { max: Number(match[1]), periodMs: Number(match[2]) };
}

/**
 * `10` (batches of up to 10, no wait), `10/500` (a head waits up to 500 ms for them), or `none`.
 * The wait is always sent: a merge patch of `{maxSize}` alone would keep an earlier wait.
 */
function batchOf(flags: FlagValues, command: string): { maxSize: number; maxWaitMs: number } | null {
  const raw = str(flags, 'batch')!;
  if (raw.trim() === 'none') return null;
  const match = /^\s*(\d+)\s*(?:\/\s*(\d+)\s*)?$/.exec(raw);
  if (!match) throw new UsageError(`--batch is <max>[/<ms>], e.g. 10 or 10/500, or none (got "${raw}")`, command);
  return { maxSize: Number(match[1]), maxWaitMs: Number(match[2] ?? 0) };
}

/** The fields the setting flags given name, with their values. */
function settingsOf(flags: FlagValues, command: string): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const [name, [field, kind]] of Object.entries(SETTINGS)) {
    if (flags[name] === undefined) continue;
    if (kind === 'whole') settings[field] = intFlag(flags, name, command, 0);
    else if (kind === 'rate') settings[field] = rateOf(flags, name, command);
    else if (kind === 'batch') settings[field] = batchOf(flags, command);
    else settings[field] = str(flags, name);
  }
  return settings;
}

/** --config's JSON object, or {} without it. */
async function documentOf(ctx: ConfigSources, command: string): Promise<Record<string, unknown>> {
  const document = await jsonFlag(ctx.flags, 'config', command, ctx.stdin);
  if (document === undefined) return {};
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    const got = document === null ? 'null' : Array.isArray(document) ? 'an array' : typeof document;
    throw new UsageError(`--config must be a JSON object of the config's fields (got ${got})`, command);
  }
  return document as Record<string, unknown>;
}

interface ConfigSources {
  flags: FlagValues;
  stdin?: AsyncIterable<string | Uint8Array>;
}

/** PUT's body for `queue create`: --config, with the setting flags over it. It needs an endpoint. */
export async function createConfig(ctx: ConfigSources): Promise<QueueConfigInput> {
  const config = { ...(await documentOf(ctx, 'queue create')), ...settingsOf(ctx.flags, 'queue create') };
  if (config.endpoint === undefined) throw new UsageError('missing --endpoint <url> (or "endpoint" in --config)', 'queue create');
  return config as QueueConfigInput;
}

/** The fields --unset names: repeated, comma-separated, as the config spells them or in kebab-case. */
function unsetFields(flags: FlagValues): Field[] {
  const given = flags.unset;
  const names = (Array.isArray(given) ? given : typeof given === 'string' ? [given] : []).flatMap((value) => value.split(','));
  return names.map((name) => {
    const field = name.trim().replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    if (!(field in CONFIG_FIELDS)) throw new UsageError(`--unset: the config has no field "${name.trim()}" (docs/http-api.md#queues lists them)`, 'queue configure');
    return field as Field;
  });
}

/** PATCH's body for `queue configure`: --config's merge patch, the setting flags, --unset's nulls. */
export async function configPatch(ctx: ConfigSources): Promise<QueueConfigPatch> {
  const settings = settingsOf(ctx.flags, 'queue configure');
  const patch: Record<string, unknown> = { ...(await documentOf(ctx, 'queue configure')), ...settings };
  for (const field of unsetFields(ctx.flags)) {
    if (field in settings) throw new UsageError(`${field} is both set and unset`, 'queue configure');
    patch[field] = null;
  }
  if (Object.keys(patch).length === 0) throw new UsageError('nothing to change: give a setting flag, --config or --unset', 'queue configure');
  return patch as QueueConfigPatch;
}
