// Spike for issue 30, question 4 follow-up (throwaway): `npm run dev` reloads the Worker with
// mf.setOptions when a file under src/ changes (scripts/dev-worker.mjs). What does that do to an
// open SSE stream and to the hub's in-memory state? Opens a reader, calls setOptions with the same
// options, and reports whether/when the stream ended and whether the hub is a new instance.
// Run: node spike/q4-reload.mjs
import { Miniflare } from 'miniflare';
import { COMPATIBILITY_DATE, HUB_SOURCE, openSse, sleep } from './lib.mjs';

const options = (marker) => ({
  modules: [{ type: 'ESModule', path: 'index.mjs', contents: `${HUB_SOURCE}\n// ${marker}\n` }],
  compatibilityDate: COMPATIBILITY_DATE,
  host: '127.0.0.1',
  port: 0,
  durableObjects: { HUB: { className: 'EventHub', useSQLite: true } },
});
const mf = new Miniflare(options('first'));
const out = {};
try {
  const url = (await mf.ready).origin;
  const before = await (await fetch(`${url}/q/jobs/state`)).json();
  const reader = await openSse(`${url}/q/jobs/events`, () => {});
  const ended = reader.done.then((how) => ({ how, at: Date.now() }), (err) => ({ how: `error: ${err.message}`, at: Date.now() }));
  const t0 = Date.now();
  await mf.setOptions({ ...options('second'), port: Number(url.split(':')[2]) });
  out.setOptionsMs = Date.now() - t0;
  const result = await Promise.race([ended, sleep(5000).then(() => null)]);
  out.streamAfterReload = result ? { how: result.how, msAfterReloadStarted: result.at - t0 } : 'still open 5 s after';
  const after = await (await fetch(`${url}/q/jobs/state`)).json();
  out.newHubInstance = after.instance !== before.instance;
  out.subscribersAfter = after.subscribers;
} finally {
  await mf.dispose();
}
console.log(JSON.stringify(out, null, 2));
