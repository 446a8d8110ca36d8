// Request bodies: JSON only (415 otherwise, a missing content-type included), at most 10 MiB
// (413, checked before parsing and while reading), and parse errors as BAD_JSON.
import type { Context } from 'hono';
import { QueueError } from '../core/errors';

export const MAX_BODY_BYTES = 10 * 1024 * 1024;
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

/** The request's JSON body, checked for type and size before it is parsed. */
export async function readJson(c: Context): Promise<unknown> {
  const type = c.req.header('content-type');
  if (type === undefined || !JSON_TYPE.test(type)) {
    throw new QueueError('UNSUPPORTED_MEDIA_TYPE', 'send the body as content-type: application/json');
  }
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > MAX_BODY_BYTES) throw tooLarge();
  const text = c.req.raw.body ? await readCapped(c.req.raw.body) : '';
  if (text.trim() === '') throw new QueueError('BAD_JSON', 'the request body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new QueueError('BAD_JSON', `the body is not valid JSON: ${(error as Error).message}`);
  }
}
