// What a publish token may send (docs/security.md#what-a-public-publish-token-exposes). A publish token ships inside web pages, so
// anyone may hold it: it adds jobs and nothing more. `group`, `data` and `id` are always
// allowed; `delayMs` and `callbackUrl` only as far as the queue allows (publishMaxDelayMs,
// publishCallbackOrigins); every other job field is 403 FIELD_NOT_ALLOWED. Its ids live apart
// from every other producer's: they are stored under PUBLISH_ID_PREFIX.
import type { StoredConfig } from '../../protocol/config';
import { QueueError } from '../../protocol/errors';

/**
 * What a publish token's job id reads back as: `welcome-42` sent by a browser is the job
 * `pub:welcome-42`, never the backend's `welcome-42`.
 */
export const PUBLISH_ID_PREFIX = 'pub:';
/** A stored id is at most 256 characters (jobIdSchema): a published one leaves room for its prefix. */
const MAX_PUBLISHED_ID = 256 - PUBLISH_ID_PREFIX.length;

/** The fields of a job as parsed (job-input.ts), those a publish token may send named. */
interface PublishedJob {
  id?: string;
  delayMs?: number;
  callbackUrl?: string;
  [field: string]: unknown;
}

const ALWAYS = new Set(['group', 'data', 'id']);

/** A field the queue may open to publish tokens, and whether this value is open. */
const OPENED: Record<string, (value: unknown, config: StoredConfig) => boolean> = {
  delayMs: (_, config) => config.publishMaxDelayMs > 0,
  callbackUrl: (value, config) => config.publishCallbackOrigins.includes(new URL(String(value)).origin),
};

function invalid(path: string, message: string): QueueError {
  return new QueueError('VALIDATION_FAILED', `${path}: ${message}`, [{ path, message }]);
}

/**
 * Why a callbackUrl was refused: its origin is not one the queue lists. Without it the 403 read as
 * if the queue refused callbackUrl outright, when one more entry in publishCallbackOrigins opens
 * it. Only the sender's own origins are named: the ones the queue lists are the admin's to know.
 */
function originsNote(origins: ReadonlySet<string>): string {
  if (origins.size === 0) return '';
  const named = [...origins].sort().join(', ');
  return `: the origin${origins.size === 1 ? '' : 's'} of callbackUrl, ${named}, ${origins.size === 1 ? 'is' : 'are'} not in its publishCallbackOrigins`;
}

/**
 * Refuses a publish token's jobs (`paths[i]`: job i's path prefix in the body, '' or
 * 'jobs.<i>.') that use a field the queue does not open to it: 403 FIELD_NOT_ALLOWED naming every
 * such field of the whole call, then 400 VALIDATION_FAILED for a batch over publishRateLimit.max
 * or publishTokenRateLimit.max,
 * a delayMs past publishMaxDelayMs or an id too long for its prefix. Nothing is sent to Redis before this passes.
 */
export function checkPublished(jobs: readonly PublishedJob[], paths: readonly string[], config: StoredConfig): void {
  const refused = new Set<string>();
  /** The callbackUrl origins refused: the message names them, so the page's author sees what to list. */
  const origins = new Set<string>();
  for (const job of jobs) {
    for (const [field, value] of Object.entries(job)) {
      if (value === undefined || ALWAYS.has(field)) continue;
      if (OPENED[field]?.(value, config)) continue;
      refused.add(field);
      if (field === 'callbackUrl') origins.add(new URL(String(value)).origin);
    }
  }
  if (refused.size > 0) {
    const fields = [...refused].sort();
    throw new QueueError('FIELD_NOT_ALLOWED', `a publish token may not send ${fields.join(', ')} to this queue${originsNote(origins)}`, { fields });
  }
  // A batch a rate limit could never let through is not worth a Retry-After.
  for (const name of ['publishRateLimit', 'publishTokenRateLimit'] as const) {
    const limit = config[name];
    if (limit && jobs.length > limit.max) {
      throw invalid('jobs', `a publish token sends at most the queue's ${name}.max (${limit.max}) jobs in one batch`);
    }
  }
  for (const [i, job] of jobs.entries()) {
    if (job.delayMs !== undefined && job.delayMs > config.publishMaxDelayMs) {
      throw invalid(`${paths[i]}delayMs`, `a publish token's delayMs is at most the queue's publishMaxDelayMs (${config.publishMaxDelayMs})`);
    }
    if (job.id !== undefined && job.id.length > MAX_PUBLISHED_ID) {
      throw invalid(`${paths[i]}id`, `a publish token's job ids are at most ${MAX_PUBLISHED_ID} characters (stored as ${PUBLISH_ID_PREFIX}<id>)`);
    }
  }
}
