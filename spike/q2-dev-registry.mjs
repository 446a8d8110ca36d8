// Spike for issue 30, question 2 (throwaway): three Miniflare instances (three workerd processes,
// like startMiniflareWorkers) share ONE EventHub through Miniflare 4's dev registry
// (unsafeDevRegistryPath). Process A ("groupq") defines the Durable Object; B and C ("groupq-b",
// "groupq-c", same script) bind it with { className: 'EventHub', scriptName: 'groupq' }.
// Measures: that all three reach the same hub instance; post on B -> SSE reader on C latency
// (200 paced posts, then 200 back to back); reader on A too; in order; what happens when B starts
// before A (the registry is watched, so a late owner should be picked up); and when A goes away.
// WITH_ASSETS=1 gives every instance groupq's [assets] (scripts/worker-stack.mjs ASSETS), as the
// real harness does: Miniflare then puts an assets router in front of each Worker.
// Run: node spike/q2-dev-registry.mjs
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { measureLatency, openSse, round, sleep, startHub, workerdPids } from './lib.mjs';

const { ASSETS } = await import('../scripts/worker-stack.mjs');
const assets = process.env.WITH_ASSETS === '1' ? { assets: ASSETS } : {};
const registry = await mkdtemp(path.join(os.tmpdir(), 'spike-registry-'));
const remoteHub = { HUB: { className: 'EventHub', scriptName: 'groupq' } };
const out = { withAssets: Boolean(assets.assets) };
const started = [];
try {
  // B first, before the owner exists, to see how a binding to a missing script behaves.
  const b = await startHub({ ...assets, name: 'groupq-b', unsafeDevRegistryPath: registry, durableObjects: remoteHub });
  started.push(b);
  const early = await fetch(`${b.url}/q/jobs/state`);
  out.beforeOwnerStarted = { status: early.status, body: (await early.text()).slice(0, 160) };

  const t0 = Date.now();
  const a = await startHub({ ...assets, name: 'groupq', unsafeDevRegistryPath: registry });
  started.push(a);
  const c = await startHub({ ...assets, name: 'groupq-c', unsafeDevRegistryPath: registry, durableObjects: remoteHub });
  started.push(c);
  out.workerdProcesses = workerdPids().length;
  out.registryFiles = await readdir(registry);
  // The watcher on B may need a moment to see A's entry.
  let bState;
  for (;;) {
    const res = await fetch(`${b.url}/q/jobs/state`);
    if (res.ok) {
      bState = await res.json();
      break;
    }
    if (Date.now() - t0 > 15_000) throw new Error(`B never reached the hub: ${res.status} ${await res.text()}`);
    await sleep(100);
  }
  out.msUntilBReachedHubAfterAStarted = Date.now() - t0;
  const states = await Promise.all([a, b, c].map(async (w) => (await fetch(`${w.url}/q/jobs/state`)).json()));
  out.sameHubInstance = states.every((s) => s.instance === states[0].instance);

  // Readers on C and on A; posts through B.
  const onC = new Map();
  const onA = new Map();
  let lastId = 0;
  let outOfOrder = 0;
  const record = (map, check) => (e) => {
    if (e.data === undefined) return;
    if (check) {
      if (Number(e.id) <= lastId) outOfOrder += 1;
      lastId = Number(e.id);
    }
    map.set(JSON.parse(e.data).key, e.at);
  };
  const readerC = await openSse(`${c.url}/q/jobs/events?heartbeatMs=5000`, record(onC, true));
  out.readerContentType = readerC.res.headers.get('content-type');
  const readerA = await openSse(`${a.url}/q/jobs/events`, record(onA, false));
  await measureLatency({ publishUrl: `${b.url}/q/jobs/publish`, count: 20, gapMs: 5, received: onC });
  onC.clear();
  onA.clear();
  out.postOnB_readOnC_paced = await measureLatency({ publishUrl: `${b.url}/q/jobs/publish`, count: 200, gapMs: 10, received: onC });
  const aPaced = await measureLatency({ publishUrl: `${b.url}/q/jobs/publish`, count: 0, gapMs: 0, received: onA });
  out.readerOnA_got = onA.size;
  onC.clear();
  out.postOnB_readOnC_backToBack = await measureLatency({ publishUrl: `${b.url}/q/jobs/publish`, count: 200, gapMs: 0, received: onC });
  onC.clear();
  out.postOnA_readOnC_paced = await measureLatency({ publishUrl: `${a.url}/q/jobs/publish`, count: 200, gapMs: 10, received: onC });
  out.outOfOrderOnC = outOfOrder;
  void aPaced;

  // Owner gone: what B answers and what C's open stream does.
  const cEnded = readerC.done.then((how) => ({ how, at: Date.now() }), (err) => ({ how: `error: ${err.message}`, at: Date.now() }));
  const killedAt = Date.now();
  await a.mf.dispose();
  started.splice(started.indexOf(a), 1);
  const after = await fetch(`${b.url}/q/jobs/state`).catch((err) => ({ status: 'fetch failed', text: async () => err.message }));
  out.afterOwnerDisposed = {
    bStateStatus: after.status,
    bStateBody: (await after.text()).slice(0, 160),
    cStream: await Promise.race([cEnded.then((r) => ({ ...r, msAfterKill: r.at - killedAt })), sleep(3000).then(() => 'still open after 3 s')]),
  };
  await readerA.close();
  await readerC.close();
} finally {
  for (const w of started) await w.mf.dispose().catch(() => {});
  await rm(registry, { recursive: true, force: true });
}
for (const k of Object.keys(out)) if (typeof out[k] === 'number') out[k] = round(out[k]);
console.log(JSON.stringify(out, null, 2));
