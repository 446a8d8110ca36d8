// Spike for issue 30, question 1 follow-up (throwaway): when does the hub learn that a reader went
// away? Opens readers on hub-worker.mjs, drops them (fetch aborted: undici closes the socket),
// then posts an event every 500 ms and watches the hub's count of writers and of failed writes.
// Also: with a heartbeat of 1 s and nothing posted, how soon the dead writer is dropped.
// Run: node spike/q1-disconnect.mjs
import { openSse, sleep, startHub } from './lib.mjs';

const { mf, url } = await startHub();
const state = async (q) => (await fetch(`${url}/q/${q}/state`)).json();
const post = (q) => fetch(`${url}/q/${q}/publish`, { method: 'POST', body: JSON.stringify({ events: [{ type: 'probe' }] }) }).then((r) => r.json());
const out = { posting: [], heartbeatOnly: [] };
try {
  const aborts = [new AbortController(), new AbortController()];
  for (const a of aborts) await openSse(`${url}/q/posting/events`, () => {}, a.signal);
  out.openBefore = (await state('posting')).subscribers;
  for (const a of aborts) a.abort();
  const closedAt = Date.now();
  for (let i = 0; i < 20; i++) {
    await post('posting');
    await sleep(500);
    const s = await state('posting');
    out.posting.push({ ms: Date.now() - closedAt, subscribers: s.subscribers, dropped: s.dropped });
    if (s.subscribers === 0) break;
  }

  const a = new AbortController();
  await openSse(`${url}/q/hb/events?heartbeatMs=1000`, () => {}, a.signal);
  a.abort();
  const hbClosedAt = Date.now();
  for (let i = 0; i < 20; i++) {
    await sleep(500);
    const s = await state('hb');
    out.heartbeatOnly.push({ ms: Date.now() - hbClosedAt, subscribers: s.subscribers, dropped: s.dropped });
    if (s.subscribers === 0) break;
  }
} finally {
  await mf.dispose();
}
console.log(JSON.stringify(out, null, 2));
