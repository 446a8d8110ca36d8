// A V8 CPU profile of workerd's isolates over the Chrome DevTools Protocol (bench/profile-worker.ts):
// a client for workerd's inspector, and the profile's self time summed by function and by package.
// The Worker is one bundled module; its inline source map (bundleWorker({ sourcemap: true })) says
// which source file each function came from: src/... or node_modules/<package>/....
import { createRequire } from 'node:module';

/** One node of a .cpuprofile (Profiler.Profile). */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A DevTools Protocol session on one inspector target (an isolate of workerd). */
export interface CdpSession {
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

/** Node 20 has no global WebSocket: `ws` comes with miniflare (its inspector proxy uses it). */
function webSocketClass(): typeof WebSocket {
  if (typeof globalThis.WebSocket === 'function') return globalThis.WebSocket;
  const require = createRequire(createRequire(import.meta.url).resolve('miniflare'));
  return require('ws') as typeof WebSocket;
}

export async function connect(url: string): Promise<CdpSession> {
  const Socket = webSocketClass();
  const socket = new Socket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve());
    socket.addEventListener('error', () => reject(new Error(`inspector: cannot connect to ${url}`)));
  });
  let next = 1;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const pending = message.id === undefined ? undefined : waiting.get(message.id);
    if (!pending) return; // an event: none is asked for
    waiting.delete(message.id!);
    if (message.error) pending.reject(new Error(`inspector: ${message.error.message}`));
    else pending.resolve(message.result);
  });
  socket.addEventListener('close', () => {
    for (const pending of waiting.values()) pending.reject(new Error('inspector: connection closed'));
    waiting.clear();
  });
  return {
    send<T>(method: string, params: Record<string, unknown> = {}) {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => socket.close(),
  };
}

// --- The bundle's inline source map: generated (line, column) -> source file ---

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Base64 VLQ numbers of one mapping segment. */
function decodeSegment(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = BASE64.indexOf(char);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
}

/** For each generated line, its segments' [generated column, source index, source line], in column order. */
export interface SourceMap {
  sources: string[];
  lines: [number, number, number][][];
}

export function inlineSourceMap(code: string): SourceMap {
  const marker = '//# sourceMappingURL=data:application/json;base64,';
  const at = code.lastIndexOf(marker);
  if (at < 0) throw new Error('cpu profile: the bundle has no inline source map');
  const map = JSON.parse(Buffer.from(code.slice(at + marker.length).trim(), 'base64').toString('utf8')) as { sources: string[]; mappings: string };
  let source = 0;
  let sourceLine = 0;
  const lines = map.mappings.split(';').map((line) => {
    let column = 0;
    return line
      .split(',')
      .filter((segment) => segment.length > 0)
      .flatMap((segment): [number, number, number][] => {
        const [dColumn = 0, dSource, dLine = 0] = decodeSegment(segment);
        column += dColumn;
        if (dSource === undefined) return [];
        source += dSource;
        sourceLine += dLine;
        return [[column, source, sourceLine]];
      });
  });
  return { sources: map.sources, lines };
}

/** The source file and 1-based line of a generated position (0-based line and column), or undefined. */
export function sourceOf(map: SourceMap, line: number, column: number): { file: string; line: number } | undefined {
  const segments = map.lines[line];
  if (!segments) return undefined;
  let found: [number, number, number] | undefined;
  for (const segment of segments) {
    if (segment[0] > column) break;
    found = segment;
  }
  return found === undefined ? undefined : { file: map.sources[found[1]]!, line: found[2] + 1 };
}

// --- Summing a profile's self time ---

export interface ProfileRow {
  name: string;
  /** Sampled ms (samples x their time deltas). */
  ms: number;
  /** Share of all samples but idle ones. */
  share: number;
}

export interface ProfileSummary {
  /** Wall time the profile covers (ms). */
  durationMs: number;
  /** ms sampled with the isolate in any state (V8 samples by wall clock). */
  sampledMs: number;
  /** ms with JavaScript, the garbage collector or the VM itself on the stack: not (program) or (idle). */
  busyMs: number;
  /** Self time by function (name, source file, line), over busyMs. */
  functions: ProfileRow[];
  /** Self time by package: groupq's src/<layer>, node_modules packages, V8's own entries. */
  packages: ProfileRow[];
}

/** V8's own entries: not code of anyone's. */
const MARKERS = new Set(['(program)', '(idle)', '(root)', '(garbage collector)']);
/** Samples where the isolate ran no JavaScript of its own: the thread idle, or workerd's C++ with no JS below. */
const NOT_BUSY = new Set(['(program)', '(idle)', '(root)']);

/** Where a source file belongs: a package under node_modules, or src/<layer> of groupq. */
export function packageOf(file: string): string {
  const modules = file.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = file.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const src = file.lastIndexOf('src/');
  if (src >= 0) {
    const parts = file.slice(src).split('/');
    // src/core/<part>/..., src/<part>/..., src/<file>
    const depth = parts[1] === 'core' && parts.length > 3 ? 3 : parts.length > 2 ? 2 : 1;
    return `groupq ${parts.slice(0, depth).join('/')}`;
  }
  return file;
}

export function summarize(profile: CpuProfile, map: SourceMap | undefined, isBundle: (url: string) => boolean): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  // Each sample counts its time delta (the interval V8 kept), or 1 ms apart where none are given.
  const selfMs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // A sample's delta is the time since the previous one: it belongs to the next sample's interval.
    const ms = (deltas[i + 1] ?? deltas[i] ?? 1000) / 1000;
    selfMs.set(samples[i]!, (selfMs.get(samples[i]!) ?? 0) + ms);
  }
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let sampledMs = 0;
  let busyMs = 0;
  for (const [id, ms] of selfMs) {
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame;
    sampledMs += ms;
    if (NOT_BUSY.has(functionName)) continue;
    busyMs += ms;
    let where: string;
    let pkg: string;
    if (MARKERS.has(functionName)) {
      where = '';
      pkg = functionName;
    } else if (isBundle(url) && map) {
      const source = sourceOf(map, lineNumber, columnNumber) ?? { file: url, line: lineNumber + 1 };
      where = `${source.file.replace(/^.*?(node_modules\/|src\/)/, '$1')}:${source.line}`;
      pkg = packageOf(source.file);
    } else {
      where = url === '' ? '(native)' : `${url}:${lineNumber + 1}`;
      pkg = url === '' ? '(native: workerd and V8 built-ins)' : url.replace(/:\d+$/, '');
    }
    const name = `${functionName || '(anonymous)'} ${where}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + ms);
    packages.set(pkg, (packages.get(pkg) ?? 0) + ms);
  }
  const rows = (sums: Map<string, number>) =>
    [...sums]
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => ({ name, ms: Math.round(ms * 10) / 10, share: busyMs > 0 ? Math.round((ms / busyMs) * 1000) / 10 : 0 }));
  return {
    durationMs: Math.round((profile.endTime - profile.startTime) / 1000),
    sampledMs: Math.round(sampledMs),
    busyMs: Math.round(busyMs),
    functions: rows(functions),
    packages: rows(packages),
  };
}
