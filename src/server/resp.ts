// RESP2, the Redis wire protocol, as the Node server's TCP client (redis-tcp.ts) speaks it: a
// command goes out as an array of bulk strings; replies come back in chunks that split anywhere,
// so the parser keeps what it has read and resumes where a chunk ended.
// Status and bulk replies both become strings (the REST API does not tell them apart either);
// an error reply is a RespError value, so a script's table can hold one without ending the parse.

/** An error reply (`-NOSCRIPT ...`): its message is Redis' own line. */
export class RespError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RespError';
  }
}

/** One reply: nil is null, an integer a number, arrays nest. */
export type RespReply = string | number | null | RespError | RespReply[];

const CR = 0x0d;
const STATUS = 0x2b; // '+'
const ERROR = 0x2d; // '-'
const INTEGER = 0x3a; // ':'
const BULK = 0x24; // '$'
const ARRAY = 0x2a; // '*'

/** `args` as one RESP command: `*<n>` then each argument as a bulk string of its UTF-8 bytes. */
export function encodeCommand(args: readonly string[]): Buffer {
  let text = `*${args.length}\r\n`;
  for (const arg of args) text += `$${Buffer.byteLength(arg, 'utf8')}\r\n${arg}\r\n`;
  return Buffer.from(text, 'utf8');
}

/** An array still being read: the items so far and how many are left. */
interface Frame {
  items: RespReply[];
  left: number;
}

/**
 * A parser fed with each chunk the socket delivers; it calls `onReply` once per complete
 * top-level reply, in order. It throws on bytes that are not RESP (the connection is then
 * unusable: the caller drops it).
 */
export function createReplyParser(onReply: (reply: RespReply) => void): (chunk: Buffer) => void {
  // Bytes received but not yet parsed, kept as chunks and joined only once `need` bytes are
  // there, so a large bulk string arriving in many chunks is copied once, not once per chunk.
  let held: Buffer[] = [];
  let heldBytes = 0;
  let need = 1;
  const frames: Frame[] = [];

  // A finished value completes the array it belongs to, which may complete its parent, and so on.
  function finish(value: RespReply): void {
    for (;;) {
      const frame = frames[frames.length - 1];
      if (!frame) {
        onReply(value);
        return;
      }
      frame.items.push(value);
      if (--frame.left > 0) return;
      frames.pop();
      value = frame.items;
    }
  }

  return function push(chunk: Buffer): void {
    held.push(chunk);
    heldBytes += chunk.length;
    if (heldBytes < need) return;
    const buf = held.length === 1 ? chunk : Buffer.concat(held, heldBytes);
    let pos = 0;
    need = 1;
    while (pos < buf.length) {
      const lineEnd = buf.indexOf(CR, pos);
      if (lineEnd === -1 || lineEnd + 1 >= buf.length) {
        need = buf.length - pos + 1;
        break;
      }
      const type = buf[pos];
      const line = buf.toString('utf8', pos + 1, lineEnd);
      let next = lineEnd + 2;
      let value: RespReply;
      if (type === STATUS) value = line;
      else if (type === ERROR) value = new RespError(line);
      else if (type === INTEGER) value = Number(line);
      else if (type === BULK) {
        const length = Number(line);
        if (length < 0) value = null;
        else if (buf.length < next + length + 2) {
          need = next + length + 2 - pos;
          break;
        } else {
          value = buf.toString('utf8', next, next + length);
          next += length + 2;
        }
      } else if (type === ARRAY) {
        const count = Number(line);
        if (count > 0) {
          frames.push({ items: [], left: count });
          pos = next;
          continue;
        }
        value = count < 0 ? null : [];
      } else {
        throw new Error(`RESP protocol error: unexpected byte 0x${(type ?? 0).toString(16)}`);
      }
      pos = next;
      finish(value);
    }
    const rest = buf.subarray(pos);
    held = rest.length > 0 ? [rest] : [];
    heldBytes = rest.length;
  };
}
