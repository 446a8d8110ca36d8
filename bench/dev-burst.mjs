// The burst of issue 20 against a running `npm run dev` (or any groupq with the dev admin token):
// 1,000 jobs over 100 groups in two POST /jobs/batch of 500, to an endpoint on loopback that
// answers 200 at once, while GET /v1/queues/{q} is asked every 100 ms until every job arrived.
// Prints one JSON line: the GETs' wait (ms), how many got no answer, the drain's time.
//   node bench/dev-burst.mjs [worker URL, default http://127.0.0.1:8787] [admin token]
// The same burst on the bench's own stack, with workerd's CPU, is `npm run bench` (its burst).
import http from 'node:http';

const base = process.argv[2] ?? 'http://127.0.0.1:8787';
const token = process.argv[3] ?? process.env.GROUPQ_ADMIN_TOKEN ?? 'gq_dev_admin_token';
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const JOBS = 1000;

let arrived = 0;
const endpoint = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    arrived++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', () => resolve(undefined)));
const queue = `dev-burst-${Date.now()}`;
const put = await fetch(`${base}/v1/queues/${queue}`, {
  method: 'PUT',
  headers,
  body: JSON.stringify({ endpoint: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (endpoint.address()).port}/`, maxAttempts: 1 }),
});
if (put.status !== 200) throw new Error(`PUT queue answered ${put.status}: ${await put.text()}`);

/** @type {number[]} */
const waits = [];
let unanswered = 0;
let stopped = false;
/** @type {Promise<void>[]} */
const gets = [];
const t0 = performance.now();
const pacer = (async () => {
  for (let sent = 0; !stopped; sent++) {
    const due = t0 + sent * 100;
    if (due > performance.now()) await new Promise((resolve) => setTimeout(resolve, due - performance.now()));
    const at = performance.now();
    gets.push(
      fetch(`${base}/v1/queues/${queue}`, { headers, signal: AbortSignal.timeout(30_000) }).then(
        async (res) => {
          await res.arrayBuffer();
          waits.push(performance.now() - at);
        },
        () => void unanswered++,
      ),
    );
  }
})();
for (let from = 0; from < JOBS; from += 500) {
  const jobs = Array.from({ length: 500 }, (_, i) => ({ id: `j${from + i}`, group: `g${(from + i) % 100}`, data: { text: 'x'.repeat(80) } }));
  const res = await fetch(`${base}/v1/queues/${queue}/jobs/batch`, { method: 'POST', headers, body: JSON.stringify({ jobs }) });
  if (res.status !== 201) throw new Error(`POST /jobs/batch answered ${res.status}: ${await res.text()}`);
}
while (arrived < JOBS && performance.now() - t0 < 120_000) await new Promise((resolve) => setTimeout(resolve, 20));
const drainMs = performance.now() - t0;
stopped = true;
await pacer;
await Promise.all(gets);
endpoint.close();
waits.sort((a, b) => a - b);
const at = (/** @type {number} */ p) => Math.round(waits[Math.min(waits.length - 1, Math.floor((waits.length * p) / 100))] ?? NaN);
console.log(JSON.stringify({ arrived, drainMs: Math.round(drainMs), gets: waits.length + unanswered, getP50Ms: at(50), getP99Ms: at(99), getMaxMs: Math.round(waits.at(-1) ?? NaN), unanswered }));
