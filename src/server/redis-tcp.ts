// The Node server's Redis client over TCP (REDIS_URL: redis:// or rediss://), so `groupq serve`
// reaches any Redis 7 without a REST hop. It offers what the engine uses of @upstash/redis
// (ScriptRunner) with the replies and errors that client gives (automaticDeserialization off):
// the engine, runScript's NOSCRIPT fallback and asQueueError work on it unchanged.
// One command connection, pipelined: each command is written as it comes and replies match
// calls in order. Pub/sub (the event hub across processes) has a connection of its own, opened
// at the first subscribe, because a subscribed connection takes no other command.
// A lost connection fails every call waiting on it, and the next call connects again. A command
// already written is never sent again: a script may have run though its answer was lost.
import net from 'node:net';
import tls from 'node:tls';
import type { ScriptRunner } from '../core/store/scripts';
import { type RespReply, RespError, createReplyParser, encodeCommand } from './resp';

export type TcpRedis = ScriptRunner & {
  /** PUBLISH: resolves with how many subscribers got the message. */
  publish(channel: string, message: string): Promise<number>;
  /**
   * Calls `onMessage` with each message published on `channel` from when Redis confirmed the
   * subscription (the promise resolves then), across reconnects; messages published while the
   * connection is down are lost.
   */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<void>;
  /** Closes both connections and fails the calls still waiting; the client takes no more calls. */
  close(): Promise<void>;
};

export interface TcpRedisOptions {
  /** How long a connection (TCP, then TLS) may take before the calls waiting on it fail. @default 5000 */
  connectTimeoutMs?: number;
}

/** Where REDIS_URL points and how to log in. */
interface Target {
  host: string;
  port: number;
  tls: boolean;
  username: string;
  password: string;
  db: number;
}

// TCP keepalive finds a peer that vanished without closing (an idle subscriber sees no traffic).
const KEEPALIVE_MS = 30_000;
// Pauses between the subscriber's attempts to reconnect, doubled each time up to the last.
const RESUBSCRIBE_FIRST_MS = 100;
const RESUBSCRIBE_MAX_MS = 5_000;

/** redis://[user:pass@]host[:port][/db], or rediss:// for TLS. */
export function parseRedisUrl(url: string): Target {
  const parsed = new URL(url);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`REDIS_URL must start with redis:// or rediss:// (got ${parsed.protocol}//)`);
  }
  const path = parsed.pathname.replace(/^\//, '');
  const db = path === '' ? 0 : Number(path);
  if (!Number.isInteger(db) || db < 0) throw new Error(`REDIS_URL: the path must be a database number (got /${path})`);
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    tls: parsed.protocol === 'rediss:',
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    db,
  };
}

/** An argument as @upstash/redis sends it: strings as they are, anything else as JSON. */
const arg = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** A reply as @upstash/redis gives it: an error inside an array is its message, as the REST API's JSON has it. */
function shaped(reply: RespReply): unknown {
  if (reply instanceof RespError) return reply.message;
  return Array.isArray(reply) ? reply.map(shaped) : reply;
}

interface Waiter {
  resolve(reply: RespReply): void;
  reject(error: Error): void;
}

/** A connection, and how to end it: `fail` is called once, whatever ends it (then the socket is destroyed). */
interface Link {
  socket: net.Socket;
  end(reason: string): void;
}

function dial(target: Target, timeoutMs: number, onReply: (reply: RespReply) => void, fail: (reason: string) => void): Link {
  const socket = target.tls
    ? tls.connect({ host: target.host, port: target.port, servername: net.isIP(target.host) ? undefined : target.host })
    : net.connect({ host: target.host, port: target.port });
  let failed = false;
  const end = (reason: string) => {
    if (failed) return;
    failed = true;
    socket.destroy();
    fail(reason);
  };
  const parse = createReplyParser(onReply);
  socket.setNoDelay(true);
  socket.setKeepAlive(true, KEEPALIVE_MS);
  // Idle before it is ready means the host does not answer: no call waits longer than this.
  socket.setTimeout(timeoutMs);
  socket.once(target.tls ? 'secureConnect' : 'connect', () => socket.setTimeout(0));
  socket.on('timeout', () => end(`connect timed out after ${timeoutMs} ms`));
  socket.on('data', (chunk: Buffer) => {
    try {
      parse(chunk);
    } catch (error) {
      end((error as Error).message);
    }
  });
  socket.on('error', (error) => end(error.message));
  socket.on('close', () => end('connection lost'));
  return { socket, end };
}

/** AUTH and SELECT, sent first on each connection (before the calls written behind them). */
function handshake(target: Target, select: boolean): string[][] {
  const commands: string[][] = [];
  if (target.password) commands.push(target.username ? ['AUTH', target.username, target.password] : ['AUTH', target.password]);
  if (select && target.db !== 0) commands.push(['SELECT', String(target.db)]);
  return commands;
}

/** A client for the Redis at `url` (see TcpRedis); it connects at its first call. */
export function createTcpRedis(url: string, { connectTimeoutMs = 5000 }: TcpRedisOptions = {}): TcpRedis {
  const target = parseRedisUrl(url);
  const where = `redis ${target.host}:${target.port}`;
  let closed = false;

  // The command connection and the calls waiting on it, oldest first.
  let link: Link | null = null;
  let waiting: Waiter[] = [];
  let corked = false;

  function connect(): Link {
    const opened = dial(target, connectTimeoutMs, (reply) => waiting.shift()?.resolve(reply), (reason) => {
      if (link !== opened) return;
      link = null;
      const failed = waiting;
      waiting = [];
      const error = new Error(`${where}: ${reason}`);
      for (const waiter of failed) waiter.reject(error);
    });
    // A refused login ends the connection, failing the calls written behind it with Redis' words.
    for (const command of handshake(target, true)) {
      const refused = (reply: RespReply) => reply instanceof RespError && opened.end(`${command[0]} refused: ${reply.message}`);
      waiting.push({ resolve: refused, reject: () => undefined });
      opened.socket.write(encodeCommand(command));
    }
    return opened;
  }

  function call(args: string[]): Promise<RespReply> {
    if (closed) return Promise.reject(new Error(`${where}: the client is closed`));
    const current = (link ??= connect()).socket;
    return new Promise<RespReply>((resolve, reject) => {
      waiting.push({ resolve: (reply) => (reply instanceof RespError ? reject(reply) : resolve(reply)), reject });
      // Commands of one tick go out in one write (fewer packets, same order).
      if (!corked) {
        corked = true;
        current.cork();
        process.nextTick(() => {
          corked = false;
          current.uncork();
        });
      }
      current.write(encodeCommand(args));
    });
  }

  const command = async (args: string[]) => shaped(await call(args));

  // The subscriber connection: every channel's handlers, the subscribe calls Redis has not yet
  // confirmed, and the channels it confirmed on the current connection.
  let subscriber: Link | null = null;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const unconfirmed = new Map<string, (Waiter & { onMessage: (message: string) => void })[]>();
  const confirmed = new Set<string>();
  let retry: NodeJS.Timeout | null = null;
  let retryMs = RESUBSCRIBE_FIRST_MS;

  function onPush(reply: RespReply): void {
    if (reply instanceof RespError) {
      subscriber?.end(`refused: ${reply.message}`); // a wrong password, or no right to the channel
      return;
    }
    if (!Array.isArray(reply)) return; // AUTH's OK
    const [kind, channel, payload] = reply as [string, string, RespReply];
    if (kind === 'message') {
      // Outside the parser: a handler that throws is the caller's error, not a broken connection.
      for (const onMessage of handlers.get(channel) ?? []) queueMicrotask(() => onMessage(String(payload)));
    } else if (kind === 'subscribe') {
      confirmed.add(channel);
      retryMs = RESUBSCRIBE_FIRST_MS;
      for (const waiter of unconfirmed.get(channel) ?? []) waiter.resolve(null);
      unconfirmed.delete(channel);
    }
  }

  function openSubscriber(): Link {
    const opened = dial(target, connectTimeoutMs, onPush, (reason) => {
      if (subscriber !== opened) return;
      subscriber = null;
      confirmed.clear();
      // A subscribe still waiting fails, and its handler is dropped, so a retry does not add it twice.
      const error = new Error(`${where}: ${reason}`);
      for (const [channel, waiters] of unconfirmed) {
        for (const waiter of waiters) {
          handlers.get(channel)?.delete(waiter.onMessage);
          waiter.reject(error);
        }
        if (handlers.get(channel)?.size === 0) handlers.delete(channel);
      }
      unconfirmed.clear();
      if (!closed && handlers.size > 0) {
        retry = setTimeout(() => {
          retry = null;
          subscriber ??= openSubscriber();
        }, retryMs);
        retry.unref();
        retryMs = Math.min(retryMs * 2, RESUBSCRIBE_MAX_MS);
      }
    });
    // Pub/sub channels are global: the database number does not matter, so no SELECT.
    for (const login of handshake(target, false)) opened.socket.write(encodeCommand(login));
    if (handlers.size > 0) opened.socket.write(encodeCommand(['SUBSCRIBE', ...handlers.keys()]));
    return opened;
  }

  function subscribe(channel: string, onMessage: (message: string) => void): Promise<void> {
    if (closed) return Promise.reject(new Error(`${where}: the client is closed`));
    const known = handlers.get(channel);
    if (known) known.add(onMessage);
    else handlers.set(channel, new Set([onMessage]));
    if (known && confirmed.has(channel)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiters = unconfirmed.get(channel) ?? [];
      waiters.push({ resolve: () => resolve(), reject, onMessage });
      unconfirmed.set(channel, waiters);
      if (known) return; // its SUBSCRIBE is on its way
      if (subscriber) {
        subscriber.socket.write(encodeCommand(['SUBSCRIBE', channel]));
        return;
      }
      if (retry) clearTimeout(retry);
      retry = null;
      subscriber = openSubscriber(); // subscribes to every channel, this one included
    });
  }

  async function close(): Promise<void> {
    closed = true;
    if (retry) clearTimeout(retry);
    retry = null;
    const open = [link, subscriber].filter((each): each is Link => each !== null);
    await Promise.all(
      open.map((each) => {
        const gone = new Promise<void>((resolve) => each.socket.once('close', () => resolve()));
        each.end('client closed');
        return gone;
      }),
    );
  }

  return {
    evalsha: ((sha: string, keys: string[], args: unknown[] = []) =>
      command(['EVALSHA', sha, String(keys.length), ...keys, ...args.map(arg)])) as TcpRedis['evalsha'],
    eval: ((text: string, keys: string[], args: unknown[] = []) =>
      command(['EVAL', text, String(keys.length), ...keys, ...args.map(arg)])) as TcpRedis['eval'],
    hget: ((key: string, field: string) => command(['HGET', key, field])) as TcpRedis['hget'],
    zadd: ((key: string, ...rest: Record<string, unknown>[]) => {
      const args = ['ZADD', key];
      const [first = {}] = rest;
      // The options object, when there is one, comes first (as @upstash/redis reads it).
      if (first.nx) args.push('NX');
      else if (first.xx) args.push('XX');
      if (first.ch) args.push('CH');
      if (first.incr) args.push('INCR');
      if (first.lt) args.push('LT');
      else if (first.gt) args.push('GT');
      for (const pair of rest) if ('score' in pair && 'member' in pair) args.push(arg(pair.score), arg(pair.member));
      return command(args);
    }) as TcpRedis['zadd'],
    zrange: ((key: string, min: number | string, max: number | string, options: Record<string, unknown> = {}) => {
      const args = ['ZRANGE', key, arg(min), arg(max)];
      if (options.byScore) args.push('BYSCORE');
      if (options.byLex) args.push('BYLEX');
      if (options.rev) args.push('REV');
      if (options.offset !== undefined && options.count !== undefined) args.push('LIMIT', arg(options.offset), arg(options.count));
      if (options.withScores) args.push('WITHSCORES');
      return command(args);
    }) as TcpRedis['zrange'],
    zrem: ((key: string, ...members: unknown[]) => command(['ZREM', key, ...members.map(arg)])) as TcpRedis['zrem'],
    publish: async (channel, message) => (await command(['PUBLISH', channel, message])) as number,
    subscribe,
    close,
  };
}
