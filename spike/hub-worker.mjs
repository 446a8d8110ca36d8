// Spike for issue 30 (throwaway): a Worker plus a Durable Object `EventHub` in the same script,
// the per-queue event hub. A route POSTs an event batch to the hub of its queue
// (idFromName(queue)); another returns the hub's text/event-stream. The hub keeps each
// subscriber's TransformStream writer in memory and writes each event to every writer as it is
// posted: no storage, no polling, so an idle subscriber costs nothing but its open stream.
// Routes (queue = any name):
//   POST /q/<queue>/publish   body {"events":[{...}]} -> {"delivered": subscribers, "seq": last id}
//   GET  /q/<queue>/events    SSE; ?heartbeatMs=N writes ": hb" comments every N ms
//   GET  /q/<queue>/state     the hub's in-memory state (its instance id shows a restart)
// HUB_MODE=fetch (a binding) makes this Worker reach the hub by fetch(HUB_URL + path) instead of
// its HUB binding: the fallback when a Durable Object cannot be bound across processes.
import { DurableObject } from 'cloudflare:workers';

const encoder = new TextEncoder();

export class EventHub extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    // A new id means a new instance: in-memory state (the writers, seq) was lost.
    this.instance = crypto.randomUUID();
    this.startedAt = Date.now();
    this.seq = 0;
    /** @type {Set<{ writer: WritableStreamDefaultWriter, timer?: number }>} */
    this.subscribers = new Set();
    this.dropped = 0;
  }

  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/publish') return this.publish(await request.json());
    if (url.pathname === '/subscribe') return this.subscribe(Number(url.searchParams.get('heartbeatMs') || 0));
    if (url.pathname === '/state') {
      return Response.json({ instance: this.instance, startedAt: this.startedAt, seq: this.seq, subscribers: this.subscribers.size, dropped: this.dropped });
    }
    return new Response('not found', { status: 404 });
  }

  subscribe(heartbeatMs) {
    const { readable, writable } = new TransformStream();
    const sub = { writer: writable.getWriter() };
    this.subscribers.add(sub);
    // The first bytes right away, so the client's fetch resolves and it knows it is attached.
    void this.write(sub, `: attached ${this.instance}\nretry: 1000\n\n`);
    if (heartbeatMs > 0) sub.timer = setInterval(() => void this.write(sub, `: hb ${Date.now()}\n\n`), heartbeatMs);
    return new Response(readable, {
      headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-hub-instance': this.instance },
    });
  }

  publish({ events }) {
    let text = '';
    for (const event of events) {
      this.seq += 1;
      text += `id: ${this.seq}\nevent: ${event.type ?? 'message'}\ndata: ${JSON.stringify(event)}\n\n`;
    }
    const bytes = encoder.encode(text);
    // Not awaited: one slow reader must not hold the others (or the publisher) back.
    for (const sub of this.subscribers) void this.write(sub, bytes);
    return Response.json({ delivered: this.subscribers.size, seq: this.seq, instance: this.instance });
  }

  /** Writes, and forgets a subscriber whose stream is gone (the client disconnected). */
  async write(sub, chunk) {
    try {
      await sub.writer.write(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
    } catch {
      if (this.subscribers.delete(sub)) {
        this.dropped += 1;
        clearInterval(sub.timer);
      }
    }
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const match = /^\/q\/([^/]+)\/(publish|events|state)$/.exec(url.pathname);
    if (!match) return new Response('not found', { status: 404 });
    const [, queue, action] = match;
    const path = { publish: '/publish', events: '/subscribe', state: '/state' }[action];
    const init = { method: request.method, headers: request.headers, body: request.method === 'POST' ? request.body : undefined };
    if (env.HUB_MODE === 'fetch') {
      return fetch(`${env.HUB_URL}/q/${queue}/${action}${url.search}`, init);
    }
    const stub = env.HUB.get(env.HUB.idFromName(queue));
    return stub.fetch(`https://hub${path}${url.search}`, init);
  },
};
