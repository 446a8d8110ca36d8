// Request bodies: JSON only (415 otherwise, a missing content-type included), at most 10 MiB
// (413, checked before parsing and while reading; lease callbacks pass a smaller cap), parse
// errors as BAD_JSON, at most MAX_JSON_DEPTH levels of nesting (400: validating deeper values
// overflows the stack), and no lone surrogate in any string or key (400: Redis, its Lua cjson and
// the REST wire all need valid UTF-8, and a string that is not would fail there, half written).
import type { Context } from 'hono';
import { QueueError } from '../../protocol/errors';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Arrays and objects inside each other; zod's recursive z.json() overflows near 1,400. */
export const MAX_JSON_DEPTH = 512;
// application/merge-patch+json is JSON too (RFC 7396): what a PATCH of a queue may be sent as.
const JSON_TYPE = /^application\/(merge-patch\+)?json\s*(;|$)/i;

function tooLarge(maxBytes: number): QueueError {
  return new QueueError('PAYLOAD_TOO_LARGE', `request bodies are at most ${maxBytes} bytes`, { maxBodyBytes: maxBytes });
}

async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
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

/**
 * Where `value` holds a string or key that is not well-formed UTF-16 (a lone surrogate), as a
 * dotted path; null when it holds none. Walked without recursion.
 */
function illFormedPath(value: unknown): string | null {
  type Node = { value: unknown; parent: Node | null; key: string };
  const pathOf = (node: Node) => {
    const keys: string[] = [];
    for (let at: Node | null = node; at?.parent; at = at.parent) keys.unshift(at.key);
    return keys.join('.');
  };
  const pending: Node[] = [{ value, parent: null, key: '' }];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (typeof node.value === 'string') {
      if (!node.value.isWellFormed()) return pathOf(node);
    } else if (node.value !== null && typeof node.value === 'object') {
      for (const [key, child] of Object.entries(node.value)) {
        const entry = { value: child, parent: node, key };
        if (!key.isWellFormed()) return pathOf(entry);
        pending.push(entry);
      }
    }
  }
  return null;
}

/** A JSON text can hold a lone surrogate only as a \uD800-\uDFFF escape: most bodies skip the walk. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The request's JSON body, checked for type and size before it is parsed. */
export async function readJson(c: Context, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  return (await readJsonWithText(c, maxBytes)).value;
}

/** readJson, with the body's text too (enqueue keeps each job's data exactly as sent). */
export async function readJsonWithText(c: Context, maxBytes = MAX_BODY_BYTES): Promise<{ text: string; value: unknown }> {
  const type = c.req.header('content-type');
  if (type === undefined || !JSON_TYPE.test(type)) {
    throw new QueueError('UNSUPPORTED_MEDIA_TYPE', 'send the body as content-type: application/json');
  }
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > maxBytes) throw tooLarge(maxBytes);
  const text = c.req.raw.body ? await readCapped(c.req.raw.body, maxBytes) : '';
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
  const illFormed = SURROGATE_ESCAPE.test(text) ? illFormedPath(value) : null;
  if (illFormed !== null) {
    const message = 'strings must be valid Unicode: a lone surrogate (\\uD800-\\uDFFF without its pair) is not';
    throw new QueueError('VALIDATION_FAILED', `${illFormed || 'body'}: ${message}`, [{ path: illFormed, message }]);
  }
  return { text, value };
}
