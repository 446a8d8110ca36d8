// Spike for issue 30, question 4 (throwaway): `wrangler dev` on q4-wrangler/wrangler.toml (the
// hub Worker with [[durable_objects.bindings]] and a new_sqlite_classes migration). Starts it,
// opens an SSE reader, posts 200 events 10 ms apart and measures post -> receive latency through
// wrangler's proxy, then stops it (its own process group, which this script started).
// wrangler's global files (config, dev registry, logs) go under q4-wrangler/.home, not $HOME.
// Run: node spike/q4-wrangler-dev.mjs
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { measureLatency, openSse, sleep } from './lib.mjs';

const dir = fileURLToPath(new URL('./q4-wrangler/', import.meta.url));
const port = 18_000 + Math.floor(Math.random() * 1000);
const home = `${dir}.home`;
const child = spawn('npx', ['wrangler', 'dev', '--port', String(port), '--ip', '127.0.0.1', '--inspector-port', '0'], {
  cwd: dir,
  detached: true,
  env: { ...process.env, XDG_CONFIG_HOME: home, MINIFLARE_REGISTRY_PATH: `${home}/registry`, WRANGLER_LOG_PATH: `${home}/logs`, WRANGLER_SEND_METRICS: 'false', CI: '1' },
});
let log = '';
child.stdout.on('data', (d) => (log += d));
child.stderr.on('data', (d) => (log += d));
const url = `http://127.0.0.1:${port}`;
const out = {};
try {
  const t0 = Date.now();
  for (;;) {
    const ok = await fetch(`${url}/q/jobs/state`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() - t0 > 60_000 || child.exitCode !== null) throw new Error(`wrangler dev did not come up:\n${log}`);
    await sleep(250);
  }
  out.startMs = Date.now() - t0;
  const received = new Map();
  const reader = await openSse(`${url}/q/jobs/events?heartbeatMs=5000`, (e) => e.data !== undefined && received.set(JSON.parse(e.data).key, e.at));
  out.contentType = reader.res.headers.get('content-type');
  await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 20, gapMs: 5, received });
  received.clear();
  out.latencyPaced = await measureLatency({ publishUrl: `${url}/q/jobs/publish`, count: 200, gapMs: 10, received });
  await reader.close();
} finally {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  await sleep(1000);
}
// wrangler's banner and binding table: what it understood of the config.
out.wranglerLog = log.split('\n').filter((l) => /HUB|EventHub|Durable|binding|Ready|warn|error/i.test(l)).slice(0, 20);
console.log(JSON.stringify(out, null, 2));
