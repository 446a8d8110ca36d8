// The Python kit (python/) against the real stack: a private redis-server and REST bridge, the
// Worker in workerd, and the kit's own tests (python3 -m unittest, standard library only) as its
// producer and its endpoints, given the Worker's URL and tokens in the environment. The Worker's
// cron is fired meanwhile, as Cloudflare's would be: a retried job is pushed again by it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type RunningWorker, SIGNING_SECRET } from '../helpers/worker';
import { useWorker } from '../delivery/support';

const PYTHON_DIR = path.resolve(import.meta.dirname, '../../python');
const PUMP_MS = 200;

interface Run {
  code: number | null;
  output: string;
}

/** Runs the kit's tests to their end, firing the Worker's cron every PUMP_MS meanwhile. */
function runKitTests(worker: RunningWorker): Promise<Run> {
  const child = spawn('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], {
    cwd: PYTHON_DIR,
    env: { ...process.env, GROUPQ_URL: worker.url, GROUPQ_ADMIN_TOKEN: ADMIN_TOKEN, GROUPQ_SIGNING_SECRET: SIGNING_SECRET, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let running = true;
  const pump = (async () => {
    while (running) {
      await worker.scheduled();
      await new Promise((resolve) => setTimeout(resolve, PUMP_MS));
    }
  })();
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      running = false;
      pump.then(() => resolve({ code, output }), reject);
    });
  });
}

describe('the Python kit', () => {
  const env = useWorker();

  it('enqueues, completes, fails, retries, cancels and refuses forged deliveries against the Worker', async () => {
    const { code, output } = await runKitTests(env.worker);
    expect(code, output).toBe(0);
    // Every test ran: a live test is skipped only when the stack is not named, which here it is.
    expect(output).toMatch(/^Ran \d+ tests/m);
    expect(output).not.toMatch(/skipped/);
  }, 180_000);
});
