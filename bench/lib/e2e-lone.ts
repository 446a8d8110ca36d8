// The lone job, end to end: one POST /jobs to an idle queue, delivered and completed by its
// endpoint, then the next one once everything is quiet. This is a low-traffic webhook's whole
// cost, and what the budget of 12 commands is about. The later scheduler visit that
// finds the job's lease deadline already gone is measured apart: it comes only when nothing
// else happened on the queue for the lease's length. With `callback`, each job also has a
// callback URL (the same loopback endpoint): what an outcome callback adds to a job's cost.
import { type E2eStack, measured, waitQuiet } from './e2e-stack';
import { round, totalCalls } from './redis-stats';
import { makePayload } from './workload';

export interface E2eLoneCost {
  jobs: number;
  /** Redis commands per job: enqueue (which leases it), the due-index entry, the completion (and the outcome's settle). */
  commandsPerJob: number;
  restRequestsPerJob: number;
}

export interface E2eLone extends E2eLoneCost {
  /** The scheduler's later visit to the idle queue (the lease deadline it had registered). */
  laterVisitCommands: number;
}

async function arrived(stack: E2eStack, id: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !stack.endpoint.arrivals.has(id); ) {
    if (Date.now() > deadline) throw new Error(`e2e lone: ${id} never arrived`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function loneJobs(stack: E2eStack, jobs: number, payloadBytes: number, log: (line: string) => void, callback: boolean): Promise<E2eLoneCost> {
  const queue = callback ? 'bench-e2e-lone-callback' : 'bench-e2e-lone';
  const config = { endpoint: stack.endpoint.url, keepCompleted: 0, timeoutMs: 1000 };
  const put = await stack.api(`/v1/queues/${queue}`, { method: 'PUT', json: config });
  if (put.status !== 200) throw new Error(`e2e lone: PUT queue answered ${put.status}: ${await put.text()}`);
  await stack.scheduled(); // the new queue's first pass, as the cron would have run it
  log(`e2e lone: ${jobs} single jobs, each alone on an idle queue${callback ? ', each with a callbackUrl' : ''}`);
  const { cost } = await measured(stack, async () => {
    for (let i = 0; i < jobs; i++) {
      // No id of the producer's: a job with one is also remembered for the dedup window (+2
      // commands, the flow rows measure it); the arrival is matched by the id groupq gave.
      const job = { group: `solo:${i}`, data: makePayload(i, payloadBytes), ...(callback ? { callbackUrl: stack.endpoint.url } : {}) };
      const res = await stack.api(`/v1/queues/${queue}/jobs`, { method: 'POST', json: job });
      if (res.status !== 201) throw new Error(`e2e lone: POST /jobs answered ${res.status}: ${await res.text()}`);
      const { id } = (await res.json()) as { id: string };
      await arrived(stack, id);
      if (callback) await arrived(stack, `outcome:${id}`);
      await waitQuiet(stack, 100); // the completion (and the outcome) acknowledged before the next job comes
    }
  });
  return { jobs, commandsPerJob: round(totalCalls(cost.commands) / jobs, 2), restRequestsPerJob: round(cost.restRequests / jobs, 2) };
}

export async function loneRun(stack: E2eStack, jobs: number, payloadBytes: number, log: (line: string) => void): Promise<E2eLone> {
  const perJob = await loneJobs(stack, jobs, payloadBytes, log, false);
  // The lease deadlines (1 s + 5 s grace) pass; one cron pass finds nothing left to do.
  await new Promise((resolve) => setTimeout(resolve, 6_500));
  const visit = await measured(stack, () => stack.scheduled());
  return { ...perJob, laterVisitCommands: totalCalls(visit.cost.commands) };
}

/** The same lone jobs, each with a callbackUrl (the same endpoint: it answers 200). */
export function loneWithCallbackRun(stack: E2eStack, jobs: number, payloadBytes: number, log: (line: string) => void): Promise<E2eLoneCost> {
  return loneJobs(stack, jobs, payloadBytes, log, true);
}
