// The CPU time the Worker's runtime spends (Linux only): every workerd process descended from this
// one (Miniflare spawns one per instance; `wrangler dev` a second for its proxy), user + system
// time of all their threads from /proc/<pid>/stat, in clock ticks (`getconf CLK_TCK`, 10 ms at
// 100). Read before and after a run: what workerd used meanwhile, whatever isolate or thread of
// it did the work (the Worker, Miniflare's entry worker, the HTTP and network code in C++).
// Also their memory (VmRSS), which the event streams' rows read before and after N streams.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { round } from './redis-stats';

export interface WorkerdCpu {
  /** workerd processes found (descendants of the bench process). */
  processes: number;
  /** CPU ms per process over the run (utime + stime), in the order found. */
  msByProcess: number[];
  /** Their sum. */
  ms: number;
  /** ms / jobs. */
  msPerJob: number;
}

interface Stat {
  pid: number;
  comm: string;
  ppid: number;
  /** utime + stime, clock ticks. */
  ticks: number;
}

function readStats(): Stat[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        // After "pid (comm) ": state ppid ... utime (14th field of the line) stime (15th).
        const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [{ pid: Number(pid), comm, ppid: Number(rest[1]), ticks: Number(rest[11]) + Number(rest[12]) }];
      } catch {
        return []; // gone meanwhile, or not Linux
      }
    });
}

let ticksPerSecond: number | undefined;
/** Clock ticks per second (`getconf CLK_TCK`; 100 when it cannot say): the unit of /proc's CPU times. */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** workerd processes descended from this process, with their CPU ticks so far. */
export function workerdTicks(): Map<number, number> {
  const stats = readStats();
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
  return new Map(stats.filter(({ pid, comm }) => family.has(pid) && comm === 'workerd').map(({ pid, ticks }) => [pid, ticks]));
}

/**
 * Starts counting; `stop(jobs)` gives what every workerd process used since, per job. A process
 * that started meanwhile counts from 0; one that ended is left out (its time is lost to us).
 */
export function meterWorkerd(): { stop(jobs: number): WorkerdCpu } {
  const before = workerdTicks();
  return {
    stop(jobs) {
      const after = workerdTicks();
      const msPerTick = 1000 / clockTicks();
      const msByProcess = [...after].map(([pid, ticks]) => (ticks - (before.get(pid) ?? 0)) * msPerTick);
      const ms = msByProcess.reduce((sum, value) => sum + value, 0);
      return { processes: after.size, msByProcess, ms, msPerJob: round(ms / jobs, 3) };
    },
  };
}

/** CPU ms so far of each thread of `pid`, by thread name (/proc/<pid>/task/<tid>/stat; threads of one name summed). */
export function threadMs(pid: number): Map<string, number> {
  const msPerTick = 1000 / clockTicks();
  const threads = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.set(name, (threads.get(name) ?? 0) + (Number(rest[11]) + Number(rest[12])) * msPerTick);
    } catch {
      // ended meanwhile
    }
  }
  return threads;
}

/** VmRSS (KiB) of every workerd process descended from this one, by pid (Linux; none elsewhere). */
export function workerdRssKiB(): Map<number, number> {
  const rss = (pid: number) => {
    try {
      return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return 0; // gone meanwhile
    }
  };
  return new Map([...workerdTicks().keys()].map((pid) => [pid, rss(pid)]));
}
