// One SSE reader's stream, made in the Worker: a WebSocket to the queue's hub (hub.ts; on the Node
// server an in-process socket, src/server/hub.ts), whose messages are already SSE text, copied
// into a `text/event-stream` response. The SSE response is
// the Worker's and not the hub's because an open response keeps a Durable Object billed for
// duration, while a hub of hibernatable WebSockets is billed only while it handles events; a
// Worker waiting on I/O bills no CPU (docs/events.md).
//
// The stream writes a `retry:` hint first (how soon a reader comes back when the stream is cut:
// a deploy, the hub restarting), then the caller's opening (a gap, a job's state), then what the
// hub sends. A comment every KEEP_ALIVE_MS keeps proxies from cutting an idle stream, and finds a
// reader that left: its write fails (workerd gives a Worker no other sign; request.signal does
// not fire under compatibility_date 2026-04-26), and the WebSocket to the hub is closed then, so
// the hub stops sending to it.
import { EVENTS_RETENTION_MS } from '../../protocol/constants';
import { SSE_CONTENT_TYPE, encodeComment, encodeRetry } from '../../protocol/sse';
import type { HubSocket, HubStub, Published, Snapshot } from './hubs';
import { type EventFilter, type Hello, type HubMessage, type PublishedEvent, type StreamMessage, subscribeUrl } from './wire';

/** A comment this often: well inside the idle timeouts of proxies, and what finds a reader that left. */
export const KEEP_ALIVE_MS = 15_000;
/** The `retry:` hint: a reader whose stream was cut comes back after this long. */
export const RETRY_MS = 1000;
/**
 * A stream asks Redis for events again once the time it asked for is this close: half the
 * retention, plus up to RENEW_JITTER_MS (each stream its own), so that of many streams of one
 * queue one asks, and the hub tells the others (`wanted`).
 */
export const RENEW_BEFORE_MS = EVENTS_RETENTION_MS / 2;
const RENEW_JITTER_MS = 60_000;

/**
 * A reader that falls this far behind (bytes written and not yet read) is cut: the stream ends,
 * and the reader resumes after the retry hint from the last event it read, from the hub's log.
 * Holding on for it would hold its events in this isolate's memory without bound.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();

/** What a Worker holds of a queue's hub: the Durable Object's stub (hub.ts), its RPC and its fetch. */
export interface HubObject {
  publish(events: PublishedEvent[]): Promise<Published>;
  snapshot(filter: EventFilter, since?: string): Promise<Snapshot>;
  fetch(input: string, init?: RequestInit): Promise<Response>;
}

/** A queue's hub as a Worker reaches it: RPC, and a stream attaches by a WebSocket upgrade (hub.ts fetch). */
export function workerHub(stub: HubObject): HubStub {
  return {
    publish: (events) => stub.publish(events),
    snapshot: (filter, since) => stub.snapshot(filter, since),
    async subscribe(filter, since) {
      const res = await stub.fetch(subscribeUrl(filter, since), { headers: { upgrade: 'websocket' } });
      const ws = res.webSocket;
      if (!ws) throw new Error(`the event hub did not take the stream: ${res.status} ${await res.text()}`);
      ws.accept();
      return ws;
    },
  };
}

/**
 * A stream's socket to its hub (a WebSocket in a Worker). The hub's hello is read by open(); what
 * follows is held until a listener takes it, so a caller may read the job between attaching and
 * streaming.
 */
export class HubSubscription {
  private held: HubMessage[] = [];
  private listener: ((message: HubMessage) => void) | null = null;
  private closedListener: (() => void) | null = null;
  private ended = false;

  private constructor(
    private readonly ws: HubSocket,
    readonly hello: Hello,
  ) {}

  /** Attaches to the hub with `filter`, resuming after `since`; resolves with the hub's hello. */
  static async open(hub: HubStub, filter: EventFilter, since: string | undefined): Promise<HubSubscription> {
    const ws = await hub.subscribe(filter, since);
    // Until the hello is read there is no subscription yet: what comes meanwhile waits in `early`.
    let subscription: HubSubscription | undefined;
    const early: HubMessage[] = [];
    let hubEnded = false;
    const hello = await new Promise<Hello>((resolve, reject) => {
      let greeted = false;
      ws.addEventListener('message', (event) => {
        const message = JSON.parse(event.data as string) as HubMessage;
        if (subscription) subscription.take(message);
        else if (greeted) early.push(message);
        else if (message.t === 'hello') {
          greeted = true;
          resolve(message);
        } else reject(new Error(`the event hub's first message was ${message.t}`));
      });
      const closed = () => {
        hubEnded = true;
        if (subscription) subscription.hubClosed();
        else reject(new Error('the event hub closed the stream before its hello'));
      };
      ws.addEventListener('close', closed);
      ws.addEventListener('error', closed);
    });
    subscription = new HubSubscription(ws, hello);
    subscription.held.push(...early);
    if (hubEnded) subscription.hubClosed();
    return subscription;
  }

  private take(message: HubMessage): void {
    if (this.listener) this.listener(message);
    else this.held.push(message);
  }

  private hubClosed(): void {
    this.ended = true;
    this.closedListener?.();
  }

  /** Hands every message to `onMessage` (those held first), and the hub's close to `onClosed`. */
  listen(onMessage: (message: HubMessage) => void, onClosed: () => void): void {
    this.listener = onMessage;
    this.closedListener = onClosed;
    for (const message of this.held.splice(0)) onMessage(message);
    if (this.ended) onClosed();
  }

  send(message: StreamMessage): void {
    if (this.ended) return;
    try {
      this.ws.send(JSON.stringify(message));
    } catch {
      // closing
    }
  }

  /** Leaves the hub: it drops the socket, and sends nothing more to it. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    try {
      this.ws.close(1000, 'reader left');
    } catch {
      // already closed
    }
  }
}

export interface StreamOptions {
  /** SSE text written after the retry hint: a gap, a job's state. */
  opening: string;
  /** The live part; none: the stream ends after its opening (a finished job's). */
  subscription?: HubSubscription;
  /** Asks Redis for events again (want-events); resolves with the time now asked for. */
  renew?: () => Promise<number>;
  /** The request's signal, should the runtime ever fire it when the reader leaves. */
  signal?: AbortSignal;
  /** What the reader gets of SSE text of whole events, the opening's and the hub's (redact.ts); all of it by default. */
  rewrite?: (text: string) => string;
}

/** The SSE response of one reader. */
export function eventStream({ opening, subscription, renew, signal, rewrite = (text) => text }: StreamOptions): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }));
  const writer = writable.getWriter();
  let timer: ReturnType<typeof setInterval> | undefined;
  let done = false;
  const stop = () => {
    if (done) return;
    done = true;
    clearInterval(timer);
    subscription?.close();
  };
  /** The stream's own end: what was written is flushed, then the reader sees the end. */
  const finish = () => {
    if (done) return;
    stop();
    writer.close().catch(() => {});
  };
  const write = (text: string) => {
    if (done) return;
    writer.write(encoder.encode(text)).catch(stop);
    if ((writer.desiredSize ?? 0) < -MAX_BUFFERED_BYTES) finish();
  };
  writer.closed.catch(stop);
  signal?.addEventListener('abort', stop);

  write(encodeRetry(RETRY_MS) + rewrite(opening));
  if (!subscription) {
    finish();
    return sseResponse(readable);
  }
  let wantedUntil = subscription.hello.wantedUntil;
  let renewing = false;
  const renewAt = RENEW_BEFORE_MS + Math.random() * RENEW_JITTER_MS;
  // Set before listen(), which may end the stream at once (a held final event): stop() clears it.
  timer = setInterval(() => {
    write(encodeComment('keep-alive'));
    if (done || !renew || renewing || wantedUntil - Date.now() > renewAt) return;
    renewing = true;
    renew()
      .then((until) => {
        wantedUntil = Math.max(wantedUntil, until);
        subscription.send({ t: 'wanted', until });
      })
      // A failed ask is asked again at the next comment: the time asked before still runs.
      .catch(() => {})
      .finally(() => {
        renewing = false;
      });
  }, KEEP_ALIVE_MS);
  subscription.listen(
    (message) => {
      if (message.t === 'frames') {
        write(rewrite(message.text));
        if (message.end) finish();
      } else if (message.t === 'wanted') {
        wantedUntil = Math.max(wantedUntil, message.until);
      }
    },
    // The hub went (a restart, a deploy): the reader comes back after the retry hint and resumes.
    finish,
  );
  return sseResponse(readable);
}

function sseResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    headers: {
      'content-type': SSE_CONTENT_TYPE,
      // A proxy must neither cache the stream nor hold it back to compress or buffer it.
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
}
