// Enqueue: validation in TypeScript (a bad batch writes nothing), then one script per batch.
import type { z } from 'zod';
import { scripts } from '../lua/scripts.generated';
import { type EngineContext, parse } from './context';
import { batchInputSchema, jobInputSchema } from './job-input';
import { groupKey, queueKeys } from './keys';
import { checkQueueName } from './queues';
import { randomId, randomSeed } from './ids';
import { runScript } from './scripts';

export interface EnqueueResult {
  id: string;
  state: 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';
  duplicate?: true;
}

type ParsedJob = z.output<typeof jobInputSchema>;

/** The per-job state fields a job record carries only when given (see job.lua). */
function recordOptions(job: ParsedJob, createdAt: number, orderMs: number): string {
  const options: Record<string, unknown> = {};
  if (job.maxAttempts !== undefined) options.ma = job.maxAttempts;
  if (job.backoff !== undefined) options.bo = job.backoff;
  if (job.timeoutMs !== undefined) options.to = job.timeoutMs;
  if (createdAt !== orderMs) options.c = createdAt;
  return Object.keys(options).length > 0 ? JSON.stringify(options) : '';
}

async function enqueueParsed(ctx: EngineContext, queue: string, jobs: ParsedJob[]): Promise<EnqueueResult[]> {
  const k = queueKeys(queue);
  const now = ctx.now();
  const keys = [k.meta, k.jobs, k.ready, k.delayed, k.active];
  const args: (string | number)[] = [now, randomSeed(), jobs.length];
  for (const job of jobs) {
    const orderMs = job.orderMs ?? now;
    const runAt = job.runAt ?? (job.delayMs !== undefined ? now + job.delayMs : 0);
    keys.push(groupKey(queue, job.group));
    args.push(job.id ?? randomId(), job.group, orderMs, runAt, JSON.stringify(job.data), recordOptions(job, now, orderMs));
  }
  const reply = await runScript(ctx.redis, scripts.enqueue, keys, args);
  return (reply[1] as [string, EnqueueResult['state'], number][]).map(([id, state, duplicate]) =>
    duplicate === 1 ? { id, state, duplicate: true } : { id, state },
  );
}

/** Adds one job. An existing id returns that job with `duplicate: true` and changes nothing. */
export async function enqueue(ctx: EngineContext, queue: string, input: unknown): Promise<EnqueueResult> {
  checkQueueName(queue);
  const [result] = await enqueueParsed(ctx, queue, [parse(jobInputSchema, input)]);
  return result!;
}

/** Adds up to 1000 jobs atomically; the batch is validated whole before anything is written. */
export async function enqueueBatch(ctx: EngineContext, queue: string, jobs: unknown): Promise<EnqueueResult[]> {
  checkQueueName(queue);
  return enqueueParsed(ctx, queue, parse(batchInputSchema, { jobs }).jobs);
}
