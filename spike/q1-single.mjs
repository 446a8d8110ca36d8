// Spike for issue 30, question 1 (throwaway): one Miniflare instance runs hub-worker.mjs (Worker +
// EventHub Durable Object). Measures, through Miniflare to a Node fetch reader:
//  - post -> receive latency of 200 single-event posts (p50/p95), and of a 200-event burst;
//  - that events arrive in order with their SSE ids;
//  - that the hub's in-memory state (instance id, seq, writers) survives between requests while
//    a stream is open, through an idle spell of IDLE_S seconds (default 80), with and without
//    heartbeat comments (every 5 s), and what happens to it once every stream is closed.
// Run: node spike/q1-single.mjs   (IDLE_S=20 for a quick run)
import { measureLatency, now, openSse, round, sleep, startHub, summary } from './lib.mjs';

const IDLE_S = Number(process.env.IDLE_S ?? 80);
const { mf, url } = await startHub();
const state = async () => (await fetch(`${url}/q/jobs/state`)).json();
const out = {};
try {
  // A reader that records each event's receive time by its key, and checks the ids ascend.
  const received = new Map();
  let lastId = 0;
  let outOfOrder = 0;
  const t0 = now();
  const sub = await openSse(`${url}/q/jobs/events`, (e) => {
    if (e.data === undefined) return;
    const id = Number(e.id);
    if (id <= lastId) outOfOrder += 1;
    lastId = id;
    received.set(JSON.parse(e.data).key, e.at);
  });
  out.subscribeHeadersMs = round(now() - t0);
  out.contentType = sub.res.headers.get('content-type');
  const before = await state();

  // Warm-up, then 200 posts 10 ms apart, then 200 posts back to back.
  await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 20, gapMs: 5, received });
  received.clear();
  out.latencyPaced = await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 200, gapMs: 10, received });
  received.clear();
  out.latencyBackToBack = await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 200, gapMs: 0, received });
  out.outOfOrder = outOfOrder;

  // One batch of 200 events in one POST: all in one write.
  received.clear();
  const sentAt = now();
  const batch = Array.from({ length: 200 }, (_, i) => ({ type: 'added', key: `b${i}`, sentAt }));
  await (await fetch(`${url}/q/jobs/publish`, { method: 'POST', body: JSON.stringify({ events: batch }) })).json();
  while (received.size < 200) await sleep(5);
  out.batchOf200 = summary([...received.values()].map((at) => at - sentAt));

  const after = await state();
  out.stateBetweenRequests = { sameInstance: before.instance === after.instance, seqAfter: after.seq, subscribers: after.subscribers };

  // Idle: one stream with heartbeats every 5 s, one without, IDLE_S seconds of nothing posted.
  const hbComments = [];
  const quietEvents = [];
  const withHb = await openSse(`${url}/q/idle/events?heartbeatMs=5000`, (e) => (e.comment?.startsWith('hb') ? hbComments.push(e.at) : 0));
  const quiet = await openSse(`${url}/q/idle/events`, (e) => (e.data ? quietEvents.push(e) : 0));
  const idleBefore = await fetch(`${url}/q/idle/state`).then((r) => r.json());
  await sleep(IDLE_S * 1000);
  const idleAfter = await fetch(`${url}/q/idle/state`).then((r) => r.json());
  await fetch(`${url}/q/idle/publish`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'completed', key: 'late' }] }) });
  await sleep(300);
  out.idle = {
    seconds: IDLE_S,
    heartbeatComments: hbComments.length,
    sameInstanceAfterIdle: idleBefore.instance === idleAfter.instance,
    subscribersAfterIdle: idleAfter.subscribers,
    quietStreamGotEventAfterIdle: quietEvents.length === 1,
  };

  // Close every stream, then see whether the hub is evicted (a new instance) after a while.
  const closeAt = Date.now();
  for (const s of [sub, withHb, quiet]) await s.close();
  await sleep(1000);
  const afterClose = await fetch(`${url}/q/idle/state`).then((r) => r.json());
  out.afterClose = { subscribers: afterClose.subscribers, dropped: afterClose.dropped, sameInstance: afterClose.instance === idleAfter.instance };
  // The hub learns of a gone reader only when a write to it fails: post once, then look again.
  await fetch(`${url}/q/idle/publish`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'probe', key: 'probe' }] }) });
  await sleep(200);
  const afterProbe = await fetch(`${url}/q/idle/state`).then((r) => r.json());
  out.afterCloseAndOnePost = { subscribers: afterProbe.subscribers, dropped: afterProbe.dropped };
  // Poll /state every 5 s (each poll is a request, which itself keeps it alive), so instead wait once.
  await sleep(IDLE_S * 1000);
  const later = await fetch(`${url}/q/idle/state`).then((r) => r.json());
  out.afterCloseAndIdle = { secondsIdle: Math.round((Date.now() - closeAt) / 1000), sameInstance: later.instance === idleAfter.instance, seq: later.seq };
} finally {
  await mf.dispose();
}
console.log(JSON.stringify(out, null, 2));
