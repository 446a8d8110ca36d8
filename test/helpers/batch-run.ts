// One run of a batch queue under real concurrency, for the batch order tests: producers enqueue
// while the queue flows (each group's jobs one request after another, so that its order is the
// order they were sent in), the endpoint answers each batch as the test's `respond` says and
// feeds everything into the batch checker (batch-checker.ts), the cron fires meanwhile (retries
// of held groups, lapsed leases and maxWaitMs heads need it), and at the end the API's final
// word on every job goes to the checker. `respond` answers with random delays of its own.
import { GroupqClient, type JobInput, type QueueCounts } from '../../src/client';
import { callback, putQueue, sleep } from '../delivery/support';
import { type BatchDelivery, BatchChecker, type JobEnd } from './batch-checker';
import type { Endpoint, Reply } from './endpoint';
import { hash, prng } from './random';
import { ADMIN_TOKEN, type RunningWorker } from './worker';

export interface Run {
  seed: number;
  workers: RunningWorker[];
  checker: BatchChecker;
  /** Async batches being finished after their 202. */
  tasks: Promise<void>[];
}

export interface RunSpec {
  workers: RunningWorker[];
  endpoint: Endpoint;
  queue: string;
  /** The queue's config; `endpoint` is added. Its batch.maxSize bounds every batch. */
  config: Record<string, unknown> & { batch: { maxSize: number; maxWaitMs: number } };
  seed: number;
  groups: number;
  jobs: number;
  producers: number;
  /** Each job's maxAttempts. @default 3 */
  maxAttempts?: number;
  /** Fields of a job's input besides group, id, data and maxAttempts (a timeoutMs, say). */
  extras?: (id: string) => Record<string, unknown>;
  /** The answer to a batch; `rand` is fixed per (seed, batch, attempt of its first job, how often that came). */
  respond: (run: Run, d: BatchDelivery, rand: () => number) => Reply | Promise<Reply>;
  /** Gives up (the test fails, saying how many jobs are open) after this long. @default 40 s */
  limitMs?: number;
}

/** A draw fixed per text, whatever the interleaving. */
export const drawsFor = (text: string) => prng(hash(text) * 2 ** 32);

/**
 * After a 202: end the batch's jobs one by one, in order, through their own callbacks, each as
 * `plan` says (a failure returns the jobs behind it untouched: the plan stops there).
 */
export async function endByCallbacks(run: Run, d: BatchDelivery, plan: JobEnd[], rand: () => number): Promise<void> {
  for (const [i, end] of plan.entries()) {
    await sleep(Math.floor(rand() * 10));
    const job = d.body.jobs[i]!;
    const expected = run.checker.end(d, i, end);
    const answer =
      end === 'complete'
        ? await callback(job.callbacks.complete, { lease: job.lease.token, result: { async: job.id } })
        : await callback(job.callbacks.fail, { lease: job.lease.token, error: 'async failure', retry: end === 'fail' });
    run.checker.answered(d, i, expected, answer.status, answer.json?.state);
    if (end !== 'complete') return;
  }
}

/** Every job the API lists as completed or failed, with its attempts. */
async function finalStates(worker: RunningWorker, queue: string) {
  const client = new GroupqClient({ url: worker.url, token: ADMIN_TOKEN, retries: 0 }).queue(queue);
  const states = new Map<string, { state: string; attempts: number }>();
  for (const state of ['completed', 'failed'] as const) {
    for await (const job of client.listJobs({ state, limit: 1000 })) states.set(job.id, { state: job.state, attempts: job.attempts });
  }
  return states;
}

async function counts(worker: RunningWorker, queue: string): Promise<QueueCounts> {
  const res = await worker.api(`/v1/queues/${queue}`);
  return ((await res.json()) as { counts: QueueCounts }).counts;
}

/** One producer: its own groups (g % producers === p), singles and enqueue batches, one request at a time. */
async function produce(spec: RunSpec, run: Run, p: number, count: number): Promise<void> {
  const rand = prng(spec.seed * 31 + p);
  const groups = Array.from({ length: spec.groups }, (_, g) => `g${g}`).filter((_, g) => g % spec.producers === p);
  let made = 0;
  while (made < count) {
    const size = Math.min(count - made, rand() < 0.5 ? 1 : 2 + Math.floor(rand() * 8));
    const jobs: (JobInput & { id: string; group: string })[] = Array.from({ length: size }, () => {
      const id = `s${spec.seed}-p${p}-${made++}`;
      const group = groups[Math.floor(rand() * groups.length)]!;
      return { id, group, data: { id }, maxAttempts: spec.maxAttempts ?? 3, ...spec.extras?.(id) };
    });
    for (const job of jobs) run.checker.enqueued(job.group, job.id, job.maxAttempts!);
    const worker = spec.workers[Math.floor(rand() * spec.workers.length)]!;
    const path = `/v1/queues/${spec.queue}/jobs${size === 1 ? '' : '/batch'}`;
    const res = await worker.api(path, { method: 'POST', json: size === 1 ? jobs[0] : { jobs } });
    const text = await res.text(); // read to its end: a body left unread breaks the Worker's pipe
    if (res.status !== 201) throw new Error(`enqueue: ${res.status} ${text}`);
    // Now and then a pause, so that some groups run dry and others pile up.
    if (rand() < 0.2) await sleep(Math.floor(rand() * 30));
  }
}

/** Runs the scenario to its end and returns the checker's verdict and what the run did. */
export async function runBatches(spec: RunSpec) {
  const { workers, queue, seed } = spec;
  const run: Run = { seed, workers, checker: new BatchChecker({ maxSize: spec.config.batch.maxSize }), tasks: [] };
  // How often each (batch, attempt) came: the same jobs at the same attempt again (after a 429,
  // or behind a failure) draw anew, else a 429 would come back 429 until the job fails for good.
  const times = new Map<string, number>();
  spec.endpoint.handle(async (r) => {
    const d = run.checker.received(r);
    // The Worker hung up before an answer: its timeout failed the batch's first job.
    r.signal.addEventListener('abort', () => run.checker.timedOut(d));
    const key = `${seed}/${d.body.id}/${d.body.jobs[0]!.attempt}`;
    times.set(key, (times.get(key) ?? 0) + 1);
    return spec.respond(run, d, drawsFor(`${key}/${times.get(key)}`));
  });
  await putQueue(workers[0]!, queue, { ...spec.config, endpoint: spec.endpoint.url });
  const perProducer = Math.ceil(spec.jobs / spec.producers);
  let producing = true;
  const producers = Promise.all(Array.from({ length: spec.producers }, (_, p) => produce(spec, run, p, perProducer))).finally(() => {
    producing = false;
  });
  let failure: unknown;
  producers.catch((error: unknown) => (failure = error));
  const total = perProducer * spec.producers;
  const deadline = Date.now() + (spec.limitMs ?? 40_000);
  let tick = 0;
  const open = () => run.checker.pending();
  // Until the endpoint has ended every job, then until the Worker's books agree.
  for (let c = await counts(workers[0]!, queue); producing || open() > 0 || c.completed + c.failed < total || c.active > 0; tick++) {
    if (failure) throw failure;
    if (Date.now() > deadline) {
      c = await counts(workers[0]!, queue);
      const seen = JSON.stringify(run.checker.seenSoFar(), null, 1);
      throw new Error(`seed ${seed}: ${open()} of ${total} jobs still open, counts ${JSON.stringify(c)}; violations so far: ${seen}`);
    }
    await workers[tick % workers.length]!.scheduled();
    await sleep(20);
    if (!producing && open() === 0) c = await counts(workers[tick % workers.length]!, queue);
  }
  await producers;
  await Promise.all(run.tasks);
  const final = await finalStates(workers[0]!, queue);
  return { checker: run.checker, total, violations: run.checker.violations(final), stats: run.checker.stats(), counts: await counts(workers[0]!, queue) };
}
