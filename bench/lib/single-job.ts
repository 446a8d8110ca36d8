// Metric 6: the lone-job path on an otherwise empty queue, repeated and averaged:
// enqueue (single), reserve, complete. Measured twice: with the plain API (reserve(q, 1), then
// complete without reserving more) and the way a drain runs it (settle([], n), then the completion
// in settle([complete], n), which also looks for a next job and finds none).
import type { Engine } from '../../src/core/engine';
import { type LeaseSpot, type LeasedJob, spotOf } from '../../src/core/engine/leases';
import type { BenchStack } from './stack';
import type { FetchCounter } from './fetch-counter';
import type { RespClient } from '../../scripts/resp.mjs';
import { type CommandCounts, addCounts, commandStats, diffCounts, perUnit, resetStats, round, totalCalls } from './redis-stats';
import { makePayload } from './workload';

type Phase = 'enqueue' | 'reserve' | 'complete';

export interface SingleJobVariant {
  commandsPerJob: number;
  commandsPerPhase: Record<Phase, number>;
  commandsPerJobByCommand: CommandCounts;
  commandsPerPhaseByCommand: Record<Phase, CommandCounts>;
  restRequestsPerJob: number;
}

export interface SingleJobResult {
  iterations: number;
  /** reserve(queue, 1), complete(queue, job, 0) */
  api: SingleJobVariant;
  /** settle(queue, [], n), settle(queue, [complete], n): what a drain does for a lone job */
  drain: SingleJobVariant;
}

type LoneState = { id: string; lease: string; spot?: LeaseSpot };
type Steps = Record<Phase, (engine: Engine, queue: string, state: LoneState) => Promise<void>>;

async function measure(
  stack: BenchStack,
  admin: RespClient,
  fetches: FetchCounter,
  queue: string,
  iterations: number,
  steps: Steps,
): Promise<SingleJobVariant> {
  const engine = stack.engine();
  await engine.putQueue(queue, { endpoint: 'http://127.0.0.1:9/jobs' });
  // The cron's first pass, as on any queue older than a minute: a new queue's ~timers marker is
  // due at once (so that pass runs), and until it has run every reserve pays for seeing it.
  await engine.tick(queue);
  const perPhase: Record<Phase, CommandCounts> = { enqueue: {}, reserve: {}, complete: {} };
  await resetStats(admin);
  const fetchesBefore = fetches.count;
  let snapshot = await commandStats(admin);
  const state: LoneState = { id: '', lease: '' };
  for (let i = 0; i < iterations; i++) {
    for (const phase of ['enqueue', 'reserve', 'complete'] as const) {
      await steps[phase](engine, queue, state);
      const next = await commandStats(admin);
      addCounts(perPhase[phase], diffCounts(snapshot, next));
      snapshot = next;
    }
  }
  const restRequests = fetches.count - fetchesBefore;
  const { counts } = await engine.getQueue(queue);
  if (Object.values(counts).some((n) => n !== 0)) throw new Error(`single job: queue not empty after the run: ${JSON.stringify(counts)}`);
  await engine.deleteQueue(queue);

  const total = addCounts(addCounts(addCounts({}, perPhase.enqueue), perPhase.reserve), perPhase.complete);
  return {
    commandsPerJob: round(totalCalls(total) / iterations, 3),
    commandsPerPhase: {
      enqueue: round(totalCalls(perPhase.enqueue) / iterations, 3),
      reserve: round(totalCalls(perPhase.reserve) / iterations, 3),
      complete: round(totalCalls(perPhase.complete) / iterations, 3),
    },
    commandsPerJobByCommand: perUnit(total, iterations),
    commandsPerPhaseByCommand: {
      enqueue: perUnit(perPhase.enqueue, iterations),
      reserve: perUnit(perPhase.reserve, iterations),
      complete: perUnit(perPhase.complete, iterations),
    },
    restRequestsPerJob: round(restRequests / iterations, 3),
  };
}

export async function runSingleJob(
  stack: BenchStack,
  iterations: number,
  reserveBatch: number,
  payloadBytes: number,
  fetches: FetchCounter,
  log: (line: string) => void,
): Promise<SingleJobResult> {
  const enqueue: Steps['enqueue'] = async (engine, queue, state) => {
    const { id, state: jobState } = await engine.enqueue(queue, { group: 'user:1', data: makePayload(1, payloadBytes) });
    if (jobState !== 'waiting') throw new Error(`single job: enqueued as ${jobState}`);
    state.id = id;
  };
  const took = (state: LoneState, jobs: LeasedJob[]) => {
    if (jobs.length !== 1 || jobs[0]!.id !== state.id) throw new Error('single job: reserve did not return the job');
    state.lease = jobs[0]!.lease.token;
    state.spot = spotOf(jobs[0]!); // what a dispatcher knows of its own leases
  };

  log(`single job: ${iterations} x enqueue, reserve(q, 1), complete`);
  const api = await measure(stack, stack.admin, fetches, 'bench-single-api', iterations, {
    enqueue,
    reserve: async (engine, queue, state) => took(state, (await engine.reserve(queue, 1)).jobs),
    complete: async (engine, queue, state) => {
      const { state: done } = await engine.complete(queue, { id: state.id, lease: state.lease, spot: state.spot });
      if (done !== 'completed') throw new Error(`single job: complete gave ${done}`);
    },
  });

  log(`single job: ${iterations} x enqueue, settle([], ${reserveBatch}), settle([complete], ${reserveBatch})`);
  const drain = await measure(stack, stack.admin, fetches, 'bench-single-drain', iterations, {
    enqueue,
    reserve: async (engine, queue, state) => took(state, (await engine.settle(queue, [], reserveBatch)).jobs),
    complete: async (engine, queue, state) => {
      const settled = await engine.settle(queue, [{ kind: 'complete', id: state.id, lease: state.lease, spot: state.spot }], reserveBatch);
      if (settled.results[0]?.state !== 'completed' || settled.jobs.length !== 0) throw new Error('single job: settle did not complete it alone');
    },
  });
  return { iterations, api, drain };
}
