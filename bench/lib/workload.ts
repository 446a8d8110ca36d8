// The jobs the benchmark enqueues: job i goes to group `user:${i % groups}`, each with a
// JSON payload of exactly `payloadBytes` bytes shaped like a product event. Also the sizes a
// run's GROUPQ_BENCH_* variable overrides (sizesFrom).
export interface BenchJob {
  group: string;
  data: unknown;
}

export function makePayload(i: number, payloadBytes: number): unknown {
  const data = { userId: 100_000 + i, event: 'signup', meta: { source: 'web', plan: 'pro', ts: 1_700_000_000_000 + i, pad: '' } };
  const missing = payloadBytes - JSON.stringify(data).length;
  if (missing < 0) throw new Error(`payloads cannot be smaller than ${JSON.stringify(data).length} bytes`);
  data.meta.pad = 'x'.repeat(missing);
  return data;
}

/** Jobs `first` .. `first + jobs - 1` of the sequence (a big run builds its batches one by one). */
export function makeJobs(jobs: number, groups: number, payloadBytes: number, first = 0): BenchJob[] {
  return Array.from({ length: jobs }, (_, k) => {
    const i = first + k;
    return { group: `user:${i % groups}`, data: makePayload(i, payloadBytes) };
  });
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Runs `worker` on `workers` parallel lanes that take items from a shared list in order. */
export async function inParallel<T>(items: T[], workers: number, worker: (item: T, lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async (_, lane) => {
      while (next < items.length) await worker(items[next++]!, lane);
    }),
  );
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `base` with the sizes of the JSON object in `process.env[name]` (`'{"jobs":2000}'`): a small
 * run on a busy machine. Each must be one of base's keys and an integer of at least `min`.
 */
export function sizesFrom<T extends object>(name: string, base: T, min = 1): T {
  const config = { ...base };
  const override = process.env[name];
  if (!override) return config;
  for (const [key, value] of Object.entries(JSON.parse(override) as Record<string, unknown>)) {
    if (!(key in config) || !Number.isInteger(value) || (value as number) < min) {
      throw new Error(`${name}: ${key} must be an integer >= ${min} (one of ${Object.keys(config).join(', ')})`);
    }
    (config as Record<string, number>)[key] = value as number;
  }
  return config;
}
