// A received message in each form the kit takes (a Web Request, or headers and a raw body as
// frameworks without one hold them): its headers by name, and its body's bytes read up to a cap.
// The cap comes before anything else is done with the body, so a sender cannot make the
// receiver buffer, or hash, more than `maxBodyBytes`: a body declared larger is not read at all,
// and a stream is cut off at the first byte past the cap.
import { DeliveryVerificationError } from './errors';

/**
 * A received message as frameworks without a Web `Request` hold it: its headers (a `Headers`, or
 * a record as Node, Express, Fastify and Lambda give them, names in any case) and its body
 * exactly as received, as text or bytes. A body parsed and encoded again is not what was signed.
 */
export interface RawMessage {
  headers: Headers | Record<string, string | string[] | undefined>;
  body: string | Uint8Array | ArrayBuffer;
}

/** 1 MiB: four times a delivery at the default `maxPayloadBytes` (256 KiB). */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

// Requests and Headers are told apart by their methods, not instanceof: a framework may hand over
// those of another fetch implementation (undici's own copy, node-fetch) than the global ones.
export const isRequest = (message: Request | RawMessage): message is Request => typeof (message as Request).arrayBuffer === 'function';

/** A header of the message, by its lower-case name; the first of a repeated one. */
export function headerOf(message: Request | RawMessage, name: string): string | null {
  const { headers } = message;
  if (typeof headers.get === 'function') return (headers as Headers).get(name);
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((key) => key.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function tooLarge(what: string, maxBytes: number, declared?: number): DeliveryVerificationError {
  const size = declared === undefined ? 'is larger than' : `is declared as ${declared} bytes, more than`;
  return new DeliveryVerificationError('body_too_large', `the ${what} body ${size} maxBodyBytes (${maxBytes} bytes)`);
}

/** The chunks of a stream, as one array of bytes; throws once they pass `maxBytes`, and stops reading. */
async function readCapped(stream: ReadableStream<Uint8Array>, maxBytes: number, what: string): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Let go of the rest unread: the sender's bytes past the cap are never buffered.
      reader.cancel().catch(() => {});
      throw tooLarge(what, maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/**
 * The body's bytes as received, at most `maxBytes` of them (a Request's is read, once); throws
 * DeliveryVerificationError `body_too_large` past that. `what` names the message in the error.
 */
export async function bodyOf(message: Request | RawMessage, maxBytes: number, what: string): Promise<Uint8Array> {
  if (isRequest(message)) {
    const declared = headerOf(message, 'content-length');
    if (declared !== null && /^\d{1,16}$/.test(declared) && Number(declared) > maxBytes) {
      message.body?.cancel().catch(() => {});
      throw tooLarge(what, maxBytes, Number(declared));
    }
    // A Request of another fetch implementation may have no stream: its whole body, then the cap.
    if (message.body && typeof message.body.getReader === 'function') return readCapped(message.body, maxBytes, what);
    const bytes = new Uint8Array(await message.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw tooLarge(what, maxBytes);
    return bytes;
  }
  const { body } = message;
  let bytes: Uint8Array;
  if (typeof body === 'string') {
    // Every UTF-16 unit is at least one byte of UTF-8: a string longer than the cap is not encoded.
    if (body.length > maxBytes) throw tooLarge(what, maxBytes);
    bytes = new TextEncoder().encode(body);
  } else if (body instanceof Uint8Array) {
    bytes = body;
  } else if (body instanceof ArrayBuffer) {
    bytes = new Uint8Array(body);
  } else {
    throw new TypeError('body must be the raw body as received: a string, a Uint8Array (a Buffer) or an ArrayBuffer');
  }
  if (bytes.byteLength > maxBytes) throw tooLarge(what, maxBytes);
  return bytes;
}
