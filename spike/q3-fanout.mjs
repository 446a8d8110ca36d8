// Spike for issue 30, question 3 (throwaway): N (default 1,000) concurrent SSE readers on ONE
// EventHub. Measures the RSS of each workerd process before and after the readers attach (per
// reader), and, for posted events, the time until the first and the last reader got each one.
// MODE=single (default): one Miniflare instance; readers, posts and hub in one workerd process.
// MODE=registry: three instances on a dev registry as in q2-dev-registry.mjs: hub in A, readers
// on C, posts on B, so the per-reader memory splits into C's (the Worker proxying each stream)
// and A's (the hub's writers).
// HUB=ws: the WebSocket-hibernation variant (hub-worker-ws.mjs) instead of stream writers.
// Run: node spike/q3-fanout.mjs   (N=200 MODE=registry HUB=ws node spike/q3-fanout.mjs ...)
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HUB_SOURCE, HUB_WS_SOURCE, now, openSse, round, rssKiB, sleep, startHub, summary, workerdPids } from './lib.mjs';

const N = Number(process.env.N ?? 1000);
const MODE = process.env.MODE ?? 'single';
const POSTS = 10;
const started = [];
const registry = await mkdtemp(path.join(os.tmpdir(), 'spike-registry-'));
const SOURCE = process.env.HUB === 'ws' ? HUB_WS_SOURCE : HUB_SOURCE;
const out = { mode: MODE, hub: process.env.HUB === 'ws' ? 'websocket hibernation' : 'stream writers', readers: N };
/** One instance and the pid of the workerd process it added. */
async function start(options) {
  const pidsBefore = new Set(workerdPids());
  const hub = await startHub(options, SOURCE);
  started.push(hub);
  const pid = workerdPids().find((p) => !pidsBefore.has(p));
  return { ...hub, pid };
}
const gc = () => globalThis.gc?.();
try {
  const remote = { HUB: { className: 'EventHub', scriptName: 'groupq' } };
  const a = await start(MODE === 'registry' ? { name: 'groupq', unsafeDevRegistryPath: registry } : {});
  const b = MODE === 'registry' ? await start({ name: 'groupq-b', unsafeDevRegistryPath: registry, durableObjects: remote }) : a;
  const c = MODE === 'registry' ? await start({ name: 'groupq-c', unsafeDevRegistryPath: registry, durableObjects: remote }) : a;
  const procs = MODE === 'registry' ? { hubA: a, postB: b, readersC: c } : { all: a };

  // Warm the path with one reader and one post so that the "before" figure has the hub loaded.
  const warm = await openSse(`${c.url}/q/big/events`, () => {});
  await fetch(`${b.url}/q/big/publish`, { method: 'POST', body: JSON.stringify({ events: [{ key: 'warm' }] }) });
  await sleep(500);
  await warm.close();
  await sleep(3000);
  const rssBefore = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, rssKiB(p.pid)]));
  gc();
  const nodeBefore = process.memoryUsage().rss;

  // Attach N readers, 100 at a time. Each records when it got each event key.
  const got = Array.from({ length: N }, () => new Map());
  const readers = [];
  const attachStart = now();
  for (let i = 0; i < N; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(N, i + 100); j++) batch.push(openSse(`${c.url}/q/big/events?heartbeatMs=15000`, (e) => e.data !== undefined && got[j].set(JSON.parse(e.data).key, e.at)));
    readers.push(...(await Promise.all(batch)));
  }
  out.attachAllMs = round(now() - attachStart);
  await sleep(3000);
  const hubState = await (await fetch(`${a.url}/q/big/state`)).json();
  out.hubSubscribers = hubState.subscribers;
  const rssAfter = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, rssKiB(p.pid)]));
  gc();
  out.rssMiB = Object.fromEntries(Object.keys(procs).map((k) => [k, { before: round(rssBefore[k] / 1024), after: round(rssAfter[k] / 1024), perReaderKiB: round((rssAfter[k] - rssBefore[k]) / N) }]));
  out.nodeReaderSideRssPerReaderKiB = round((process.memoryUsage().rss - nodeBefore) / 1024 / N);

  // POSTS single events, 500 ms apart: first and last receipt of each.
  const firsts = [];
  const lasts = [];
  let incomplete = 0;
  for (let k = 0; k < POSTS; k++) {
    const key = `p${k}`;
    const sentAt = now();
    await (await fetch(`${b.url}/q/big/publish`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'progress', key, sentAt }] }) })).json();
    const deadline = Date.now() + 10_000;
    while (got.some((m) => !m.has(key)) && Date.now() < deadline) await sleep(2);
    const times = got.map((m) => m.get(key)).filter((t) => t !== undefined);
    if (times.length < N) incomplete += 1;
    firsts.push(Math.min(...times) - sentAt);
    lasts.push(Math.max(...times) - sentAt);
    await sleep(500);
  }
  out.receiversPerEvent = { expected: N, eventsNotReachingAll: incomplete };
  out.toFirstReaderMs = summary(firsts);
  out.toLastReaderMs = summary(lasts);

  // A 100-event batch in one post.
  const sentAt = now();
  const batch = Array.from({ length: 100 }, (_, i) => ({ type: 'added', key: `b${i}`, sentAt }));
  await (await fetch(`${b.url}/q/big/publish`, { method: 'POST', body: JSON.stringify({ events: batch }) })).json();
  const deadline = Date.now() + 20_000;
  while (got.some((m) => !m.has('b99')) && Date.now() < deadline) await sleep(2);
  out.batchOf100_toLastReaderMs = round(Math.max(...got.map((m) => m.get('b99') ?? Infinity)) - sentAt);
  out.batchOf100_allReadersGotAll = got.every((m) => Array.from({ length: 100 }, (_, i) => `b${i}`).every((k) => m.has(k)));

  for (const r of readers) await r.close();
} finally {
  for (const w of started) await w.mf.dispose().catch(() => {});
  await rm(registry, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
