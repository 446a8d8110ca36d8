// Request bodies: JSON only (415 otherwise, a missing content-type included), at most 10 MiB
// (413, checked before parsing and while reading), parse errors as BAD_JSON, and at most
// MAX_JSON_DEPTH levels of nesting (400: validating deeper values overflows the stack).
import type { Context } from 'hono';
import { QueueError } from '../core/errors';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Arrays and objects inside each other; zod's recursive z.json() overflows near 1,400. */
export const MAX_JSON_DEPTH = 512;
const JSON_TYPE = /^application\/json\s*(;|$)/i;

function tooLarge(): QueueError {
  return new QueueError('PAYLOAD_TOO_LARGE', `request bodies are at most ${MAX_BODY_BYTES} bytes`, { maxBodyBytes: MAX_BODY_BYTES });
}

async function readCapped(body: ReadableStream<Uint8Array>): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}

/** The deepest nesting of arrays and objects in `value`, walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) break;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The request's JSON body, checked for type and size before it is parsed. */
export async function readJson(c: Context): Promise<unknown> {
  return (await readJsonWithText(c)).value;
}

/** readJson, with the body's text too (enqueue keeps each job's data exactly as sent). */
export async function readJsonWithText(c: Context): Promise<{ text: string; value: unknown }> {
  const type = c.req.header('content-type');
  if (type === undefined || !JSON_TYPE.test(type)) {
    throw new QueueError('UNSUPPORTED_MEDIA_TYPE', 'send the body as content-type: application/json');
  }
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > MAX_BODY_BYTES) throw tooLarge();
  const text = c.req.raw.body ? await readCapped(c.req.raw.body) : '';
  if (text.trim() === '') throw new QueueError('BAD_JSON', 'the request body is empty; send a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new QueueError('BAD_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (depthOf(value) > MAX_JSON_DEPTH) {
    throw new QueueError('VALIDATION_FAILED', `the body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, {
      maxDepth: MAX_JSON_DEPTH,
    });
  }
  return { text, value };
}
