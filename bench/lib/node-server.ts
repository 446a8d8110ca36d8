// The benchmark's `groupq serve`: one process (`node dist/server.js`, started by
// scripts/server-process.mjs) on the e2e stack's private redis-server over TCP (REDIS_URL), in
// place of the Worker in workerd. dist/server.js is rebuilt first when it is missing or older than
// a source under src/ (it bundles handlers, core and protocol, not src/server alone).
// Its CPU: the process' own utime + stime (/proc/<pid>/stat, every thread of it, ended ones too),
// the counterpart of workerd-cpu.ts' meter. Its scheduler runs in the process on the Worker's
// cron (`* * * * *`), which nothing outside can fire: scheduled() waits for its next time instead.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildPackage } from '../../scripts/build.mjs';
import { SERVER_JS, startServerProcess } from '../../scripts/server-process.mjs';
import { round } from './redis-stats';
import { clockTicks, type WorkerdCpu } from './workerd-cpu';
import { sleep } from './workload';

export interface BenchNodeServer {
  url: string;
  pid: number;
  /** Resolves once the in-process cron has had its next time (the start of the next UTC minute) and a second more. */
  scheduled(): Promise<void>;
  /** Starts counting the process' CPU; `stop(jobs)` gives what it used since, per job. */
  meterCpu(): { stop(jobs: number): WorkerdCpu };
  stop(): Promise<void>;
}

/** The newest modification time (ms) of a file under `dir`. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Runs `npm run build`'s buildPackage when dist/server.js is missing or older than src/. */
export async function ensureServerBuilt(log: (line: string) => void): Promise<void> {
  let built = 0;
  try {
    built = statSync(SERVER_JS).mtimeMs;
  } catch {
    // missing: built stays 0
  }
  const sources = newestUnder(path.join(path.dirname(SERVER_JS), '..', 'src'));
  if (built >= sources) return;
  log(built === 0 ? 'node server: dist/server.js missing, building dist/' : 'node server: dist/server.js older than src/, building dist/');
  await buildPackage();
}

/** utime + stime of `pid` so far, in ms (Linux; the whole process, all threads). */
function processMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": state ppid ... utime (14th field of the line) stime (15th).
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / clockTicks();
}

/**
 * Starts `groupq serve` on Redis at 127.0.0.1:`redisPort` over TCP. `settings` are the Worker's
 * bindings that the e2e stack chooses (admin token, signing secret); server-process.mjs adds the
 * rest as the Worker's stack has them (its origin as public URL, loopback endpoints, stay 0, log at warn).
 */
export async function startNodeServer(redisPort: number, settings: Record<string, string>, log: (line: string) => void): Promise<BenchNodeServer> {
  await ensureServerBuilt(log);
  const server = await startServerProcess({ ...settings, REDIS_URL: `redis://127.0.0.1:${redisPort}` });
  const pid = server.child.pid!;
  return {
    url: server.url,
    pid,
    async scheduled() {
      const minute = 60_000;
      await sleep(minute - (Date.now() % minute) + 1_000);
    },
    meterCpu() {
      const before = processMs(pid);
      return {
        stop(jobs) {
          const ms = processMs(pid) - before;
          return { processes: 1, msByProcess: [ms], ms, msPerJob: round(ms / jobs, 3) };
        },
      };
    },
    async stop() {
      await server.stop();
    },
  };
}
