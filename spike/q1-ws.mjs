// Spike for issue 30, question 1 variant (throwaway): hub-worker-ws.mjs, where the hub holds
// hibernatable WebSockets and the Worker turns them into SSE. Measures the same post -> receive
// latency as q1-single.mjs, and whether workerd hibernates the hub while readers stay attached
// (a new instance id after IDLE_S seconds of nothing, with the stream still delivering).
// Run: node spike/q1-ws.mjs   (IDLE_S=30 by default)
import { HUB_WS_SOURCE, measureLatency, openSse, sleep, startHub } from './lib.mjs';

const IDLE_S = Number(process.env.IDLE_S ?? 30);
const { mf, url } = await startHub({}, HUB_WS_SOURCE);
const out = {};
try {
  const received = new Map();
  let lastId = 0;
  let outOfOrder = 0;
  const reader = await openSse(`${url}/q/jobs/events`, (e) => {
    if (e.data === undefined) return;
    if (Number(e.id) <= lastId) outOfOrder += 1;
    lastId = Number(e.id);
    received.set(JSON.parse(e.data).key, e.at);
  });
  out.contentType = reader.res.headers.get('content-type');
  await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 20, gapMs: 5, received });
  received.clear();
  out.latencyPaced = await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 200, gapMs: 10, received });
  received.clear();
  out.latencyBackToBack = await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 200, gapMs: 0, received });
  out.outOfOrder = outOfOrder;

  const before = await (await fetch(`${url}/q/jobs/state`)).json();
  await sleep(IDLE_S * 1000);
  const after = await (await fetch(`${url}/q/jobs/state`)).json();
  received.clear();
  lastId = 0;
  await fetch(`${url}/q/jobs/publish`, { method: 'POST', body: JSON.stringify({ events: [{ key: 'late' }] }) });
  await sleep(300);
  out.idle = { seconds: IDLE_S, hubHibernated: before.instance !== after.instance, subscribersAfter: after.subscribers, streamStillDelivers: received.has('late') };
  await reader.close();
} finally {
  await mf.dispose();
}
console.log(JSON.stringify(out, null, 2));
