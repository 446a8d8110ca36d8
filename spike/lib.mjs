// Spike for issue 30 (throwaway): what the spike scripts share. Starting the hub Worker
// (hub-worker.mjs) under Miniflare the way scripts/worker-stack.mjs starts groupq (one Miniflare,
// so one workerd process, per instance, on 127.0.0.1:<port>); an SSE reader on Node's fetch;
// percentiles; and the RSS of the workerd processes this process spawned (from /proc).
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

export const COMPATIBILITY_DATE = '2026-04-26';
export const HUB_SOURCE = readFileSync(fileURLToPath(new URL('./hub-worker.mjs', import.meta.url)), 'utf8');
/** The WebSocket-hibernation variant (hub-worker-ws.mjs). */
export const HUB_WS_SOURCE = readFileSync(fileURLToPath(new URL('./hub-worker-ws.mjs', import.meta.url)), 'utf8');

/** Wall clock with sub-millisecond resolution, comparable between the publisher and readers. */
export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * One Miniflare instance (one workerd process) running hub-worker.mjs (or `source`).
 * @param {object} options extra Miniflare options (name, durableObjects, bindings, unsafeDevRegistryPath ...)
 * @param {string} [source] the Worker's code
 */
export async function startHub(options = {}, source = HUB_SOURCE) {
  const mf = new Miniflare({
    modules: [{ type: 'ESModule', path: 'index.mjs', contents: source }],
    compatibilityDate: COMPATIBILITY_DATE,
    host: '127.0.0.1',
    port: 0,
    durableObjects: { HUB: 'EventHub' },
    ...options,
  });
  const url = (await mf.ready).origin;
  return { mf, url };
}

/** Pids of the workerd processes whose parent is this process. */
export function workerdPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && comm.startsWith('workerd')) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** VmRSS of a process, in KiB. */
export function rssKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]);
}

/**
 * Opens an SSE stream with fetch and calls onEvent for every event and comment as it arrives.
 * Resolves once the response headers arrived; `done` settles when the stream ends.
 * @param {string} url
 * @param {(event: { id?: string, event?: string, data?: string, comment?: string, at: number }) => void} onEvent
 * @param {AbortSignal} [signal]
 */
export async function openSse(url, onEvent, signal) {
  const res = await fetch(url, { signal, headers: { accept: 'text/event-stream' } });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  const reader = res.body.getReader();
  let buffer = '';
  const done = (async () => {
    for (;;) {
      const { value, done: end } = await reader.read();
      if (end) return 'ended';
      const at = now();
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = { at };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) event.comment = line.slice(1).trim();
          else {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') event.data = event.data === undefined ? value : `${event.data}\n${value}`;
            else event[field] = value;
          }
        }
        onEvent(event);
      }
    }
  })();
  done.catch(() => {});
  return { res, done, close: () => reader.cancel().catch(() => {}) };
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export const round = (x) => Math.round(x * 100) / 100;

export function summary(latencies) {
  return {
    n: latencies.length,
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    max: round(Math.max(...latencies)),
  };
}

/**
 * Posts `count` single-event batches, one every `gapMs`, to publishUrl, each stamped with its
 * post time, and collects the latency at `reader` (a Map from seq key to receive time filled by
 * the caller's onEvent). Returns the per-event latencies in ms (receive - post start).
 */
export async function measureLatency({ publishUrl, count, gapMs, received, waitMs = 5000 }) {
  const sent = new Map();
  for (let i = 0; i < count; i++) {
    const key = `e${i}`;
    sent.set(key, now());
    const res = await fetch(publishUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ type: 'progress', key, sentAt: sent.get(key) }] }),
    });
    if (!res.ok) throw new Error(`publish: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
    if (gapMs) await sleep(gapMs);
  }
  const deadline = Date.now() + waitMs;
  while (received.size < count && Date.now() < deadline) await sleep(20);
  const latencies = [];
  let missing = 0;
  for (const [key, at] of sent) {
    const got = received.get(key);
    if (got === undefined) missing += 1;
    else latencies.push(got - at);
  }
  return { ...summary(latencies), missing };
}
