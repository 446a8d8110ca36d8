// A small RESP2 client over node:net. It keeps replies raw (bulk strings stay Buffers, status
// replies stay distinguishable from bulk strings), which client libraries such as ioredis do not.
// One connection, pipelined: each call or pipeline is written in one piece and replies are
// matched to requests in order, so a pipeline's replies are never interleaved with others'.
import net from 'node:net';

/** A simple-string reply (`+OK`), kept apart from a bulk string holding the same text. */
export class Status {
  /** @param {string} value */
  constructor(value) {
    /** @readonly */
    this.value = value;
  }
  toString() {
    return this.value;
  }
}

/** An error reply (`-ERR ...`). Returned in place inside pipeline/array results; thrown by `call`. */
export class RespError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'RespError';
  }
}

/** @typedef {string | Buffer | number} RespArg */
/**
 * A reply. Arrays hold replies too (typed `unknown[]`: JSDoc typedefs cannot be recursive).
 * @typedef {Buffer | Status | number | null | RespError | unknown[]} RespReply
 */

const CRLF = Buffer.from('\r\n');

/**
 * Encodes one command as a RESP array of bulk strings.
 * @param {RespArg[]} args
 * @returns {Buffer[]}
 */
function encodeCommand(args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const buf = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg), 'utf8');
    parts.push(Buffer.from(`$${buf.length}\r\n`), buf, CRLF);
  }
  return parts;
}

/**
 * Reads one token at `pos`: a complete scalar ({ value }), an array header ({ count }), or
 * { need } when the buffer must hold at least `need` bytes before reading again.
 * @param {Buffer} buf
 * @param {number} pos
 * @returns {{ value: RespReply, next: number } | { count: number, next: number } | { need: number }}
 */
function readToken(buf, pos) {
  const lineEnd = buf.indexOf(CRLF, pos);
  if (lineEnd === -1) return { need: buf.length + 1 };
  const type = buf[pos];
  const line = buf.toString('utf8', pos + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case 0x2b: // '+'
      return { value: new Status(line), next };
    case 0x2d: // '-'
      return { value: new RespError(line), next };
    case 0x3a: // ':'
      return { value: Number(line), next };
    case 0x24: { // '$'
      const len = Number(line);
      if (len < 0) return { value: null, next };
      if (buf.length < next + len + 2) return { need: next + len + 2 };
      return { value: buf.subarray(next, next + len), next: next + len + 2 };
    }
    case 0x2a: { // '*'
      const count = Number(line);
      if (count <= 0) return { value: count < 0 ? null : [], next };
      return { count, next };
    }
    default:
      throw new Error(`RESP protocol error: unexpected byte 0x${(type ?? 0).toString(16)}`);
  }
}

/**
 * An incremental reply parser: arrays are assembled across chunks without re-reading them, and
 * a large bulk string is joined once, when all of it arrived.
 * @param {(reply: RespReply) => void} onReply
 */
function createReplyParser(onReply) {
  /** @type {Buffer[]} */
  let chunks = [];
  let length = 0;
  let need = 1;
  /** @type {{ items: RespReply[], remaining: number }[]} */
  const frames = [];

  /** @param {RespReply} value */
  function complete(value) {
    for (;;) {
      const top = frames[frames.length - 1];
      if (!top) return onReply(value);
      top.items.push(value);
      if (--top.remaining > 0) return;
      frames.pop();
      value = top.items;
    }
  }

  return {
    /** @param {Buffer} chunk */
    push(chunk) {
      chunks.push(chunk);
      length += chunk.length;
      if (length < need) return;
      const buf = chunks.length === 1 ? chunk : Buffer.concat(chunks, length);
      let pos = 0;
      need = 1;
      while (pos < buf.length) {
        const token = readToken(buf, pos);
        if ('need' in token) {
          need = token.need - pos;
          break;
        }
        pos = token.next;
        if ('count' in token) frames.push({ items: [], remaining: token.count });
        else complete(token.value);
      }
      const rest = buf.subarray(pos);
      chunks = rest.length > 0 ? [rest] : [];
      length = rest.length;
    },
  };
}

/**
 * @param {{ host?: string, port: number, connectTimeoutMs?: number }} options
 */
export function createRespClient({ host = '127.0.0.1', port, connectTimeoutMs = 5000 }) {
  /** @type {net.Socket | null} */
  let socket = null;
  /** @type {{ resolve: (reply: RespReply) => void, reject: (err: Error) => void }[]} */
  let pending = [];
  let closed = false;

  /** @param {net.Socket} sock @param {string} reason */
  function drop(sock, reason) {
    if (socket !== sock) return;
    socket = null;
    const failed = pending;
    pending = [];
    const err = new Error(`redis ${host}:${port}: ${reason}`);
    for (const p of failed) p.reject(err);
    sock.destroy();
  }

  function connect() {
    const sock = net.createConnection({ host, port });
    const parser = createReplyParser((reply) => pending.shift()?.resolve(reply));
    sock.setNoDelay(true);
    sock.setTimeout(connectTimeoutMs, () => drop(sock, `connect timed out after ${connectTimeoutMs} ms`));
    sock.once('connect', () => sock.setTimeout(0));
    sock.on('data', (chunk) => {
      try {
        parser.push(chunk);
      } catch (err) {
        drop(sock, /** @type {Error} */ (err).message);
      }
    });
    sock.on('error', (err) => drop(sock, `connection error (${err.message})`));
    sock.on('close', () => drop(sock, 'connection lost'));
    return sock;
  }

  /**
   * Writes commands in one piece and resolves with their replies in order (errors in place).
   * @param {RespArg[][]} commands
   * @returns {Promise<RespReply[]>}
   */
  function send(commands) {
    if (closed) return Promise.reject(new Error('redis client is closed'));
    if (commands.length === 0) return Promise.resolve([]);
    if (!socket) socket = connect();
    const sock = socket;
    const replies = commands.map(
      () => /** @type {Promise<RespReply>} */ (new Promise((resolve, reject) => pending.push({ resolve, reject }))),
    );
    sock.write(Buffer.concat(commands.flatMap(encodeCommand)));
    return Promise.all(replies);
  }

  return {
    /**
     * Runs one command; an error reply rejects with a RespError.
     * @param {RespArg[]} args
     * @returns {Promise<RespReply>}
     */
    async call(args) {
      const [reply] = await send([args]);
      if (reply instanceof RespError) throw reply;
      return /** @type {RespReply} */ (reply);
    },
    /**
     * Runs commands as one pipelined write; error replies are returned in place.
     * @param {RespArg[][]} commands
     * @returns {Promise<RespReply[]>}
     */
    pipeline(commands) {
      return send(commands);
    },
    /** Closes the connection; pending commands are rejected. */
    close() {
      closed = true;
      if (socket) drop(socket, 'client closed');
    },
  };
}

/** @typedef {ReturnType<typeof createRespClient>} RespClient */
