// What the attempt history (src/lua/includes/history.lua) adds to a job's record, in bytes: a
// waiting job that never ran, and a kept failed job after 1 and after 10 attempts, each answered
// `HTTP 500: <a 40-character body>` (~100-byte payloads, as the main bench). The added bytes are
// the history's line and its `"h":1,` marker in the state; everything else of the record is what
// it was. Part of `npm run bench` (`historyBytes`).
import { queueKeys } from '../../src/core/store/keys';
import type { BenchStack } from './stack';
import { makePayload } from './workload';

const QUEUE = 'bench-history';
const ERROR_BODY = 'x'.repeat(40);

export interface HistoryBytesResult {
  waitingJob: number;
  failedAfter1Attempt: number;
  failedAfter10Attempts: number;
}

/** The bytes of a record that are its history: the history line, its newline and `"h":1,`. */
function historyBytes(record: string): number {
  const [state] = record.split('\n', 1);
  if (!JSON.parse(state!).h) return 0;
  const history = record.slice(state!.length + 1, record.indexOf('\n', state!.length + 1));
  return Buffer.byteLength(history) + 1 + Buffer.byteLength('"h":1,');
}

export async function runHistoryBytes(stack: BenchStack, log: (line: string) => void): Promise<HistoryBytesResult> {
  log('history: bytes the attempt history adds to a record');
  const engine = stack.engine();
  await engine.putQueue(QUEUE, { endpoint: 'http://127.0.0.1:9/jobs', maxAttempts: 10, backoff: { type: 'fixed', delayMs: 0, jitter: false } });
  const record = async (id: string) => String(await stack.admin.call(['HGET', queueKeys(QUEUE).jobs, id]));
  /** Enqueues job `id` and fails `attempts` of its attempts, the last one for good. */
  const failed = async (id: string, attempts: number) => {
    await engine.enqueue(QUEUE, { id, group: id, data: makePayload(1, 100) });
    for (let i = 1; i <= attempts; i++) {
      const { jobs } = await engine.reserve(QUEUE, 1);
      const outcome = { kind: 'fail' as const, id, lease: jobs[0]!.lease.token, status: 500, error: `HTTP 500: ${ERROR_BODY}` };
      await engine.settle(QUEUE, [{ ...outcome, retry: i < attempts }], 0);
    }
    return record(id);
  };
  await engine.enqueue(QUEUE, { id: 'waiting', group: 'waiting', data: makePayload(1, 100) });
  const waitingJob = historyBytes(await record('waiting'));
  await engine.removeJob(QUEUE, 'waiting'); // out of the way of the reserves below
  const result = {
    waitingJob,
    failedAfter1Attempt: historyBytes(await failed('once', 1)),
    failedAfter10Attempts: historyBytes(await failed('ten', 10)),
  };
  await engine.deleteQueue(QUEUE);
  return result;
}
