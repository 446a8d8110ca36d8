// What a scrape of GET /metrics costs Redis (src/core/engine/scrape.ts): every command of one
// scrape, with 1, 10, 100 and 1,000 queues, each with a job that ran, scraped every 15 s (an
// injected clock) with the defaults (at most 25 queues read per scrape, none read within 10 s).
// `maxCommands` is the dearest scrape of a run of them, cold one included; `oldestSeconds` how
// old the oldest figures a scrape answered were, once every queue had been read.
import { SCRAPE_DEFAULTS } from '../../src/core/engine/scrape';
import type { BenchStack } from './stack';
import { commandStats, diffCounts, totalCalls } from './redis-stats';

export interface ScrapeRow {
  queues: number;
  maxCommands: number;
  /** The steady scrape: the mean over the scrapes after every queue was read once. */
  meanCommands: number;
  oldestSeconds: number;
}

export interface ScrapeResult {
  maxReads: number;
  freshMs: number;
  intervalMs: number;
  rows: ScrapeRow[];
}

const INTERVAL_MS = 15_000;
const SIZES = [1, 10, 100, 1000];

export async function runScrape(stack: BenchStack, log: (line: string) => void): Promise<ScrapeResult> {
  let now = Date.now();
  const engine = stack.engine(() => now);
  const made: string[] = [];
  const rows: ScrapeRow[] = [];
  for (const size of SIZES) {
    log(`scrape: GET /metrics over ${size} queues`);
    while (made.length < size) {
      const queue = `bench-scrape-${made.length}`;
      await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs' });
      await engine.enqueue(queue, { group: 'g' });
      const { jobs } = await engine.reserve(queue, 1);
      await engine.complete(queue, { id: jobs[0]!.id, lease: jobs[0]!.lease.token });
      made.push(queue);
    }
    // Enough scrapes for every queue to be read, then as many again.
    const scrapes = 2 * Math.ceil(size / SCRAPE_DEFAULTS.maxReads) + 2;
    const costs: number[] = [];
    let oldestSeconds = 0;
    for (let i = 0; i < scrapes; i++) {
      now += INTERVAL_MS;
      const before = await commandStats(stack.admin);
      const parts = await engine.scrape();
      costs.push(totalCalls(diffCounts(before, await commandStats(stack.admin))));
      if (i >= scrapes / 2) oldestSeconds = Math.max(oldestSeconds, ...parts.map((part) => (now - part.at) / 1000));
    }
    const steady = costs.slice(scrapes / 2);
    rows.push({
      queues: size,
      maxCommands: Math.max(...costs),
      meanCommands: Math.round((steady.reduce((a, b) => a + b, 0) / steady.length) * 10) / 10,
      oldestSeconds,
    });
  }
  for (const queue of made) await engine.deleteQueue(queue);
  return { ...SCRAPE_DEFAULTS, intervalMs: INTERVAL_MS, rows };
}
