// What the attempt history (src/lua/includes/history.lua) adds to a job's record, in bytes: a
// waiting job that never ran, and a kept failed job after 1 and after 10 attempts, each answered
// `HTTP 500: <a 40-character body>` (~100-byte payloads, as the main bench). The added bytes are
// the history's line and its `"h":1,` marker in the state; everything else of the record is what
// it was. Prints one JSON object on stdout.
//   node scripts/run-ts.mjs bench/history-bytes.ts
import { queueKeys } from '../src/core/keys';
import { startBenchStack } from './lib/stack';
import { makePayload } from './lib/workload';

const QUEUE = 'bench-history';
const ERROR_BODY = 'x'.repeat(40);

/** The bytes of a record that are its history: the history line, its newline and `"h":1,`. */
function historyBytes(record: string): number {
  const [state] = record.split('\n', 1);
  if (!JSON.parse(state!).h) return 0;
  const history = record.slice(state!.length + 1, record.indexOf('\n', state!.length + 1));
  return Buffer.byteLength(history) + 1 + Buffer.byteLength('"h":1,');
}

async function main() {
  const stack = await startBenchStack((line) => process.stderr.write(`${line}\n`));
  try {
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
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`history-bytes failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
