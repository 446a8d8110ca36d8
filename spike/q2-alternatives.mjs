// Spike for issue 30, question 2 fallbacks (throwaway), measured the same way as
// q2-dev-registry.mjs (post on B, SSE reader on C, 200 paced posts, then 200 back to back):
//  (1) ONE Miniflare (one workerd process) with three `workers` entries, each on a socket of its
//      own (unsafeDirectSockets); B and C bind A's EventHub by scriptName, no registry needed;
//  (2) three Miniflare instances where B and C reach A's hub by fetch(A's URL) (HUB_MODE=fetch):
//      no Durable Object binding across processes at all.
// Run: node spike/q2-alternatives.mjs
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE, HUB_SOURCE, measureLatency, openSse, startHub, workerdPids } from './lib.mjs';

async function run(label, a, b, c) {
  const states = await Promise.all([a, b, c].map(async (u) => (await fetch(`${u}/q/jobs/state`)).json()));
  const onC = new Map();
  const reader = await openSse(`${c}/q/jobs/events`, (e) => e.data !== undefined && onC.set(JSON.parse(e.data).key, e.at));
  await measureLatency({ publishUrl: `${b}/q/jobs/publish`, count: 20, gapMs: 5, received: onC });
  onC.clear();
  const paced = await measureLatency({ publishUrl: `${b}/q/jobs/publish`, count: 200, gapMs: 10, received: onC });
  onC.clear();
  const backToBack = await measureLatency({ publishUrl: `${b}/q/jobs/publish`, count: 200, gapMs: 0, received: onC });
  await reader.close();
  return { label, sameHubInstance: states.every((s) => s.instance === states[0].instance), workerdProcesses: workerdPids().length, paced, backToBack };
}

const results = [];
// (1) one process, three workers on their own sockets.
const worker = (name, durableObjects) => ({
  name,
  modules: [{ type: 'ESModule', path: 'index.mjs', contents: HUB_SOURCE }],
  compatibilityDate: COMPATIBILITY_DATE,
  durableObjects,
  unsafeDirectSockets: [{ host: '127.0.0.1', port: 0 }],
});
const remote = { HUB: { className: 'EventHub', scriptName: 'groupq' } };
const one = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  workers: [worker('groupq', { HUB: 'EventHub' }), worker('groupq-b', remote), worker('groupq-c', remote)],
});
try {
  await one.ready;
  const [a, b, c] = await Promise.all(['groupq', 'groupq-b', 'groupq-c'].map(async (n) => (await one.unsafeGetDirectURL(n)).origin));
  results.push({ ...(await run('one workerd, three workers, unsafeDirectSockets', a, b, c)), urls: [a, b, c] });
} finally {
  await one.dispose();
}

// (2) three processes, B and C fetch A's URL.
const started = [];
try {
  const a = await startHub({ name: 'groupq' });
  started.push(a);
  for (const name of ['groupq-b', 'groupq-c']) started.push(await startHub({ name, durableObjects: {}, bindings: { HUB_MODE: 'fetch', HUB_URL: a.url } }));
  results.push(await run('three workerd, B and C fetch A over HTTP', a.url, started[1].url, started[2].url));
} finally {
  for (const w of started) await w.mf.dispose().catch(() => {});
}
console.log(JSON.stringify(results, null, 2));
