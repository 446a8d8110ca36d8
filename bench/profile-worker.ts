// Where the Worker's CPU goes: a V8 CPU profile of workerd under the bench's end-to-end batch run
// and under the burst (bench/lib/burst.ts), on the bench's stack (bare Miniflare, one workerd).
//   npm run profile                 both runs
//   npm run profile -- --interval=N  V8's sampling interval in µs (default 250)
// workerd opens its V8 inspector (Miniflare's inspectorPort); every isolate it lists (the Worker,
// and Miniflare's own entry and asset workers: local development only) gets a DevTools Protocol
// session that profiles it during each run. Writes bench/results/worker-<run>-<isolate>.cpuprofile
// (open them in Chrome DevTools' Performance panel) and bench/results/profile-worker.json, and
// prints each isolate's top functions and packages by self time. The Worker is bundled with an
// inline source map, so its functions are named by source file: src/<layer> or the package.
// V8 samples by wall clock: `(program)` and `(idle)` are time with no JavaScript of the isolate on
// the stack (the thread waiting, or workerd's own C++), left out of the shares, which are of the
// time the isolate ran JavaScript or collected garbage. workerd's CPU per thread is read from /proc.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorker } from '../scripts/worker-stack.mjs';
import { runBurst } from './lib/burst';
import { type CdpSession, type CpuProfile, connect, inlineSourceMap, type ProfileSummary, summarize } from './lib/cpu-profile';
import { E2E_CONFIG, throughputRun, warmUp } from './lib/e2e';
import { type E2eStack, startE2eStack } from './lib/e2e-stack';
import { table } from './lib/report';
import { meterWorkerd, threadMs, workerdTicks } from './lib/workerd-cpu';

const args = process.argv.slice(2);
const intervalUs = Number(args.find((arg) => arg.startsWith('--interval='))?.slice('--interval='.length) ?? 250);
const RESULTS = path.join('bench', 'results');
const TOP = 15;
const log = (line: string) => process.stderr.write(`profile: ${line}\n`);

interface Target {
  id: string;
  session: CdpSession;
}

interface RunProfile {
  run: string;
  jobs: number;
  /** Every workerd process's CPU per job during the run (the profiler attached). */
  workerdCpuMsPerJob: number;
  /** CPU ms of each workerd thread during the run, by thread name. */
  workerdThreadsMs: Record<string, number>;
  isolates: Record<string, ProfileSummary & { file: string }>;
}

/** Sessions on every isolate workerd's inspector lists. */
async function targets(stack: E2eStack): Promise<Target[]> {
  const base = new URL(await stack.inspectorUrl());
  const list = (await (await fetch(`http://${base.host}/json`)).json()) as { id: string; webSocketDebuggerUrl?: string }[];
  log(`inspector ${base.host}: ${list.map((t) => t.id).join(', ')}`);
  return Promise.all(list.map(async ({ id, webSocketDebuggerUrl }) => ({ id, session: await connect(webSocketDebuggerUrl ?? `ws://${base.host}/${id}`) })));
}

const fileName = (id: string) => id.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'worker';

async function profiled(run: string, jobs: number, all: Target[], map: ReturnType<typeof inlineSourceMap>, work: () => Promise<unknown>): Promise<RunProfile> {
  for (const { session } of all) {
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: intervalUs });
  }
  const pids = [...workerdTicks().keys()];
  const threadsBefore = pids.map(threadMs);
  const cpu = meterWorkerd();
  for (const { session } of all) await session.send('Profiler.start');
  await work();
  const profiles = await Promise.all(all.map(({ session }) => session.send<{ profile: CpuProfile }>('Profiler.stop')));
  const workerdCpu = cpu.stop(jobs);
  const workerdThreadsMs: Record<string, number> = {};
  pids.forEach((pid, i) => {
    for (const [name, ms] of threadMs(pid)) {
      const key = pids.length > 1 ? `${pid}:${name}` : name;
      workerdThreadsMs[key] = (workerdThreadsMs[key] ?? 0) + ms - (threadsBefore[i]!.get(name) ?? 0);
    }
  });
  const isolates: RunProfile['isolates'] = {};
  for (let i = 0; i < all.length; i++) {
    const file = path.join(RESULTS, `worker-${run}-${fileName(all[i]!.id)}.cpuprofile`);
    await writeFile(file, JSON.stringify(profiles[i]!.profile));
    isolates[all[i]!.id] = { file, ...summarize(profiles[i]!.profile, map, (url) => url.endsWith('index.mjs')) };
  }
  return { run, jobs, workerdCpuMsPerJob: workerdCpu.msPerJob, workerdThreadsMs, isolates };
}

const pct = (share: number) => `${share.toFixed(1)}%`;

function format(result: RunProfile): string {
  const threads = Object.entries(result.workerdThreadsMs)
    .filter(([, ms]) => ms > 0)
    .map(([name, ms]) => `${name} ${Math.round(ms)}`)
    .join(', ');
  const lines = [`== ${result.run}: ${result.jobs} jobs; workerd ${result.workerdCpuMsPerJob} CPU ms/job with the profiler on; CPU ms by thread: ${threads}`];
  for (const [id, s] of Object.entries(result.isolates)) {
    if (s.busyMs === 0) {
      lines.push('', `isolate ${id}: no JavaScript sampled`);
      continue;
    }
    lines.push(
      '',
      `isolate ${id}: ${s.durationMs} ms profiled, ${s.busyMs} ms running JavaScript or GC (${(s.busyMs / result.jobs).toFixed(3)} ms/job); ${s.file}`,
      table(s.functions.slice(0, TOP).map((row) => [row.name, row.ms.toFixed(0), pct(row.share)]), ['function (self time)', 'ms', 'share']),
      '',
      table(s.packages.slice(0, TOP).map((row) => [row.name, row.ms.toFixed(0), pct(row.share)]), ['package (self time)', 'ms', 'share']),
    );
  }
  return lines.join('\n');
}

async function main() {
  console.log = console.error;
  if (!(intervalUs > 0)) throw new Error('--interval= takes µs, a number above 0');
  await mkdir(RESULTS, { recursive: true });
  const code = await bundleWorker({ sourcemap: true });
  const map = inlineSourceMap(code);
  const stack = await startE2eStack(log, { code, inspectorPort: 0 });
  try {
    const all = await targets(stack);
    await warmUp(stack, E2E_CONFIG, log);
    const runs: RunProfile[] = [];
    runs.push(await profiled('batch', E2E_CONFIG.jobs, all, map, () => throughputRun(stack, E2E_CONFIG, log)));
    let burst: Awaited<ReturnType<typeof runBurst>> | undefined;
    runs.push(await profiled('burst', 1_000, all, map, async () => (burst = await runBurst(stack, log))));
    for (const { session } of all) session.close();
    const top = (rows: { name: string }[]) => rows.slice(0, 40);
    const json = {
      benchmark: 'groupq-worker-profile',
      startedAt: new Date().toISOString(),
      intervalUs,
      burst,
      runs: runs.map((r) => ({
        ...r,
        isolates: Object.fromEntries(Object.entries(r.isolates).map(([id, s]) => [id, { ...s, functions: top(s.functions), packages: top(s.packages) }])),
      })),
    };
    await writeFile(path.join(RESULTS, 'profile-worker.json'), `${JSON.stringify(json, null, 2)}\n`);
    process.stdout.write(`${runs.map(format).join('\n\n')}\n`);
    log(`written: ${path.join(RESULTS, 'profile-worker.json')} and the .cpuprofile files beside it`);
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
