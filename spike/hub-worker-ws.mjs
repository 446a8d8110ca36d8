// Spike for issue 30 (throwaway): the same routes as hub-worker.mjs, but the hub holds its readers
// as hibernatable WebSockets (ctx.acceptWebSocket) instead of stream writers, so that on
// Cloudflare an idle hub can hibernate and stop billing duration. The browser still gets SSE:
// the Worker opens a WebSocket to the hub and turns each message into SSE text on its own
// TransformStream (a Worker bills CPU, not wall time, while it waits).
//   POST /q/<queue>/publish   body {"events":[{...}]}
//   GET  /q/<queue>/events    SSE; ?heartbeatMs=N comments from the Worker side
//   GET  /q/<queue>/state     the hub's in-memory state
import { DurableObject } from 'cloudflare:workers';

const encoder = new TextEncoder();

export class EventHub extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.instance = crypto.randomUUID();
    // seq must survive hibernation: kept in storage would cost a write per batch; in this spike
    // it lives in memory, so the ids restart after a hibernation (good enough to measure).
    this.seq = 0;
  }

  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === '/subscribe') {
      const { 0: client, 1: server } = new WebSocketPair();
      this.ctx.acceptWebSocket(server);
      return new Response(null, { status: 101, webSocket: client });
    }
    if (url.pathname === '/publish') {
      const { events } = await request.json();
      const frames = events.map((event) => `id: ${++this.seq}\nevent: ${event.type ?? 'message'}\ndata: ${JSON.stringify(event)}\n\n`);
      const text = frames.join('');
      const sockets = this.ctx.getWebSockets();
      for (const ws of sockets) {
        try {
          ws.send(text);
        } catch {
          // closing: the runtime drops it from getWebSockets()
        }
      }
      return Response.json({ delivered: sockets.length, seq: this.seq, instance: this.instance });
    }
    if (url.pathname === '/state') {
      return Response.json({ instance: this.instance, seq: this.seq, subscribers: this.ctx.getWebSockets().length });
    }
    return new Response('not found', { status: 404 });
  }

  webSocketClose(ws, code) {
    ws.close(code === 1005 ? 1000 : code);
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const match = /^\/q\/([^/]+)\/(publish|events|state)$/.exec(url.pathname);
    if (!match) return new Response('not found', { status: 404 });
    const [, queue, action] = match;
    const stub = env.HUB.get(env.HUB.idFromName(queue));
    if (action !== 'events') {
      const path = action === 'publish' ? '/publish' : '/state';
      return stub.fetch(`https://hub${path}`, { method: request.method, body: request.method === 'POST' ? request.body : undefined });
    }
    const upgrade = await stub.fetch('https://hub/subscribe', { headers: { upgrade: 'websocket' } });
    const ws = upgrade.webSocket;
    if (!ws) return new Response('hub refused the WebSocket', { status: 502 });
    ws.accept();
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const heartbeatMs = Number(url.searchParams.get('heartbeatMs') || 0);
    let timer;
    const stop = () => {
      clearInterval(timer);
      try {
        ws.close(1000);
      } catch {
        // already closed
      }
    };
    const write = (text) => writer.write(encoder.encode(text)).catch(stop);
    ws.addEventListener('message', (event) => void write(event.data));
    ws.addEventListener('close', () => void writer.close().catch(() => {}));
    if (heartbeatMs > 0) timer = setInterval(() => void write(`: hb ${Date.now()}\n\n`), heartbeatMs);
    void write(': attached\nretry: 1000\n\n');
    return new Response(readable, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
  },
};
