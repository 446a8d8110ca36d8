#!/usr/bin/env node
// What one invocation delivers with Workers Free's settings, and the CPU it takes
// (docs/deploy.md#workers-free): the Worker in workerd with GROUPQ_MAX_SUBREQUESTS=50 and the
// GROUPQ_MAX_PUSHES given, a queue of ready jobs (paused while they go in), then one resume
// request (its drain runs in its waitUntil) and cron runs one after another. Each is one
// invocation: the jobs its drain delivered, and the CPU that workerd's threads used meanwhile
// (/proc/<pid>/task/*/schedstat, nanoseconds; Linux only). Cloudflare bills the isolate's
// JavaScript only: workerd's own HTTP code and Miniflare's entry worker make this an upper bound.
// Then a few cron runs with nothing due: what every run costs, drain or not.
//   node scripts/free-invocation.mjs [--pushes 8] [--runs 20] [--jobs 400]
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import { startMiniflareWorker, startPrivateStack } from './worker-stack.mjs';

const { values: args } = parseArgs({
  options: { pushes: { type: 'string', default: '8' }, runs: { type: 'string', default: '20' }, jobs: { type: 'string', default: '400' } },
});
const PUSHES = args.pushes;
const RUNS = Number(args.runs);
const JOBS = Number(args.jobs);
const ADMIN_TOKEN = randomBytes(16).toString('hex');

/** Nanoseconds on CPU of every thread of every workerd process below this one. */
function workerdCpuNs() {
  const procs = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  const parent = new Map();
  const comm = new Map();
  for (const pid of procs) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      comm.set(pid, stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      parent.set(pid, stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid) => {
    for (let p = pid; p && p !== '0'; p = parent.get(p)) if (p === String(process.pid)) return true;
    return false;
  };
  let ns = 0;
  for (const pid of procs.filter((p) => comm.get(p) === 'workerd' && below(p))) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  }
  return ns;
}

const received = [];
const endpoint = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).id);
    res.end();
  });
});
await new Promise((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
const endpointUrl = `http://127.0.0.1:${endpoint.address().port}/jobs`;

const stack = await startPrivateStack();
const worker = await startMiniflareWorker(stack, {
  GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN,
  GROUPQ_SIGNING_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
  GROUPQ_MAX_SUBREQUESTS: '50',
  GROUPQ_MAX_PUSHES: PUSHES,
});
const api = async (path, method = 'GET', json) => {
  const res = await fetch(`${worker.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
};

/** Waits until no delivery arrived for a while: the invocation's waitUntil is over. */
async function quiet() {
  for (let seen = -1; seen !== received.length; ) {
    seen = received.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

try {
  const queue = 'free';
  await api(`/v1/queues/${queue}`, 'PUT', { endpoint: endpointUrl, concurrency: 100, maxAttempts: 1 });
  await api(`/v1/queues/${queue}/pause`, 'POST');
  const jobs = Array.from({ length: JOBS }, (_, i) => ({ group: `g${i % 100}`, data: { i } }));
  for (let from = 0; from < JOBS; from += 100) await api(`/v1/queues/${queue}/jobs/batch`, 'POST', { jobs: jobs.slice(from, from + 100) });
  await quiet();

  const rows = [];
  const measure = async (what, run) => {
    const [jobsBefore, cpuBefore] = [received.length, workerdCpuNs()];
    await run();
    await quiet();
    rows.push({ what, jobs: received.length - jobsBefore, cpuMs: (workerdCpuNs() - cpuBefore) / 1e6 });
  };
  await measure('resume request', () => api(`/v1/queues/${queue}/resume`, 'POST'));
  for (let run = 0; run < RUNS && received.length < JOBS; run++) await measure('cron run', () => worker.scheduled());
  // What a cron run costs with nothing due: the part of each run that is not the drain.
  await api(`/v1/queues/${queue}`, 'DELETE');
  for (let run = 0; run < 5; run++) await measure('idle cron run', () => worker.scheduled());

  const crons = rows.filter((row) => row.what === 'cron run' && row.jobs > 0);
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const idleMs = median(rows.filter((row) => row.what === 'idle cron run').map((row) => row.cpuMs));
  for (const row of rows) console.log(`${row.what.padEnd(15)} ${String(row.jobs).padStart(3)} jobs  ${row.cpuMs.toFixed(1).padStart(6)} ms workerd CPU`);
  console.log(
    JSON.stringify({
      maxSubrequests: 50,
      maxPushes: Number(PUSHES),
      jobsPerCronRun: median(crons.map((row) => row.jobs)),
      cpuMsPerCronRun: Number(median(crons.map((row) => row.cpuMs)).toFixed(1)),
      cpuMsPerIdleCronRun: Number(idleMs.toFixed(1)),
      // Beyond an idle run's: what the due queue's tick and drain cost, per job delivered.
      cpuMsPerJob: Number((crons.reduce((sum, row) => sum + row.cpuMs - idleMs, 0) / crons.reduce((sum, row) => sum + row.jobs, 0)).toFixed(2)),
    }),
  );
} finally {
  await worker.dispose();
  await stack.close();
  endpoint.closeAllConnections();
  endpoint.close();
}
