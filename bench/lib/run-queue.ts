// How long each process of the stack waited for a CPU (Linux only): the kernel's per-thread
// schedstat (/proc/<pid>/task/<tid>/schedstat: ns on the CPU, ns runnable but waiting for one)
// of the main thread of this process, redis-server and workerd, where their event loops run.
// A worker thread samples it every few milliseconds, off this process' event loop, so that the
// wait can be set against any stretch of time (one job's way from producer to endpoint).
import { readFileSync, readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

export interface RunQueueTimeline {
  /** The processes watched, by name: `bench` (this one), `redis-server`, `workerd`. */
  names: string[];
  /** ms on the CPU per process over the whole timeline. */
  cpuMs: Record<string, number>;
  /** ms spent waiting for a CPU by `name` between two performance.now() times. */
  waitMs(name: string, from: number, to: number): number;
}

interface Sample {
  at: number;
  run: number[];
  wait: number[];
}

// Runs in the worker thread: reads every main thread's schedstat at each tick, until told to stop.
const SAMPLER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const { paths, intervalMs, origin } = workerData;
const samples = [];
let stop = false;
parentPort.on('message', () => { stop = true; });
const tick = () => {
  const sample = { at: performance.timeOrigin + performance.now() - origin, run: [], wait: [] };
  paths.forEach((path, i) => {
    // A process that ended keeps its last figures.
    let fields = null;
    try { fields = readFileSync(path, 'utf8').split(' ').map(Number); } catch {}
    const previous = samples[samples.length - 1];
    sample.run.push(fields ? fields[0] / 1e6 : previous ? previous.run[i] : 0);
    sample.wait.push(fields ? fields[1] / 1e6 : previous ? previous.wait[i] : 0);
  });
  samples.push(sample);
  if (stop) parentPort.postMessage(samples);
  else setTimeout(tick, intervalMs);
};
tick();
`;

/** This process and its descendants named `comms`, by /proc's stat (pid, comm, ppid). */
function stackProcesses(comms: string[]): [string, number][] {
  const stats = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return [{ pid: Number(pid), comm, ppid }];
      } catch {
        return []; // gone meanwhile
      }
    });
  const family = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const { pid, ppid } of stats) {
      if (family.has(ppid) && !family.has(pid)) {
        family.add(pid);
        grew = true;
      }
    }
  }
  const commOf = new Map(stats.map(({ pid, comm }) => [pid, comm]));
  const found: [string, number][] = [['bench', process.pid]];
  for (const { pid, comm, ppid } of stats) {
    // Not the forks of one (redis-server's AOF rewrite): they come and go.
    if (family.has(pid) && comms.includes(comm) && commOf.get(ppid) !== comm) found.push([comm, pid]);
  }
  return found;
}

/**
 * Starts sampling; `stop()` ends it and returns the timeline. Null where /proc has no schedstat
 * (not Linux): the latency stages are then reported without it.
 */
export function watchRunQueue(intervalMs = 2): { stop(): Promise<RunQueueTimeline> } | null {
  let processes: [string, number][];
  try {
    processes = stackProcesses(['redis-server', 'workerd']);
    readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8');
  } catch {
    return null;
  }
  const paths = processes.map(([, pid]) => `/proc/${pid}/task/${pid}/schedstat`);
  // Times in this thread's performance.now(): the worker's clock starts elsewhere.
  const worker = new Worker(SAMPLER, { eval: true, workerData: { paths, intervalMs, origin: performance.timeOrigin } });
  worker.unref(); // a run that failed before stop() must still let the process end
  return {
    async stop() {
      const samples = await new Promise<Sample[]>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        worker.postMessage('stop');
      });
      await worker.terminate();
      const names = processes.map(([name], i) => (processes.findIndex(([other]) => other === name) === i ? name : `${name}-${i}`));
      const first = samples[0]!;
      const last = samples[samples.length - 1]!;
      return {
        names,
        cpuMs: Object.fromEntries(names.map((name, i) => [name, last.run[i]! - first.run[i]!])),
        waitMs(name, from, to) {
          const i = names.indexOf(name);
          let wait = 0;
          // Each interval's wait, shared out by how much of it falls inside [from, to].
          for (let k = 1; k < samples.length; k++) {
            const a = samples[k - 1]!;
            const b = samples[k]!;
            const overlap = Math.min(to, b.at) - Math.max(from, a.at);
            if (overlap > 0 && b.at > a.at) wait += ((b.wait[i]! - a.wait[i]!) * overlap) / (b.at - a.at);
          }
          return wait;
        },
      };
    },
  };
}
