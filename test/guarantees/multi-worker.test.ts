// G1, G2, G3, G4 and G6 end to end with three Workers at once: three workerd processes (one
// Miniflare each) on one redis-server through the REST bridge, as Cloudflare runs many isolates
// against one Upstash database. The run is test/helpers/multi-run.ts's (multi-server.test.ts runs
// it on `groupq serve` processes): producers spread 3,000 jobs over 50 groups across the three
// (singles and batches, explicit orderMs with late arrivals and ties, re-sent ids); each
// Worker's cron fires every few hundred ms meanwhile. The endpoint answers after random
// latencies, sometimes 500 (retried, or failed at once with groupq-retry: false), sometimes never
// (the pushing Worker gives up at the job's timeoutMs), sometimes 202 and later a heartbeat and a
// complete/fail callback sent to a random Worker, sometimes 202 and then silence (the lease
// expires and some Worker's tick retries the job). Everything the endpoint sees goes into the
// delivery checker (test/helpers/endpoint-checker.ts), which then judges the run with the final
// states the API lists: one attempt of a group in flight at a time (G1), jobs started in
// (orderMs, enqueue order) with a retried job kept at its group's head (G2), every job completed
// or failed with attempts 1, 2, ... each ending as its outcome calls for (G3), re-sent ids
// answered as duplicates (G4), never more than the queue's concurrency in flight (G6).
// The same run goes again over a pool of three databases with the queue in 8 partitions
// (docs/scaling-out.md): each group in its partition, the partitions spread over the databases,
// every command of the three Workers routed by placement, the cron over three due indexes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { MULTI_TEST_LIMIT_MS, JOBS, runMulti } from '../helpers/multi-run';
import { createRespClient } from '../../scripts/resp.mjs';
import { placePartitions, rendezvous } from '../../src/core/store/pool';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorkers } from '../helpers/worker';

const WORKERS = 3;

const SETUPS = [
  { databases: 1, partitions: 1, title: 'one Redis' },
  { databases: 3, partitions: 8, title: 'a pool of three databases, the queue in 8 partitions' },
];

for (const { databases, partitions, title } of SETUPS) describe(`three Workers on ${title} at once (G1 G2 G3 G4 G6)`, () => {
  let stacks: PrivateStack[];
  let workers: RunningWorker[];
  let endpoint: Endpoint;
  let name: string;
  beforeAll(async () => {
    stacks = [];
    for (let i = 0; i < databases; i++) stacks.push(await startPrivateStack());
    const pool = stacks.slice(1).map(({ restUrl, restToken }) => ({ url: restUrl, token: restToken }));
    workers = await startWorkers(stacks[0]!, WORKERS, databases === 1 ? {} : { GROUPQ_REDIS_POOL: JSON.stringify(pool) });
    name = databases === 1 ? 'multi' : 'multi-pool';
    endpoint = await startEndpoint();
  });
  afterAll(async () => {
    await endpoint?.close();
    for (const w of workers ?? []) await w.dispose();
    for (const stack of stacks ?? []) await stack.close();
  });

  it(`${JOBS} jobs through ${WORKERS} Workers, with retries, hangs, expiries and async callbacks`, async () => {
    await runMulti(workers, { endpoint, queue: name, partitions, label: 'multi-worker' });
    // Each partition's keys are on the database placement chose for it, and only there (the
    // root, its config, where the queue's name scores highest).
    const tags = partitions === 1 ? [name] : [name, ...Array.from({ length: partitions }, (_, p) => `${name}:${p}`)];
    const homes = partitions === 1 ? [0] : [rendezvous(name, databases), ...placePartitions(name, partitions, databases)];
    if (partitions > 1) expect(new Set(homes.slice(1)).size).toBe(databases);
    for (const [i, stack] of stacks.entries()) {
      const redis = createRespClient({ port: stack.redisPort });
      for (const [t, tag] of tags.entries()) expect(Number(await redis.call(['EXISTS', `gq:{${tag}}:meta`])), tag).toBe(homes[t] === i ? 1 : 0);
      redis.close();
    }
  }, MULTI_TEST_LIMIT_MS);
});
