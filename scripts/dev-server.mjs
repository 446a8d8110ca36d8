// The Node server for `GROUPQ_DEV_RUNTIME=node npm run dev`: src/server (what `groupq serve`
// runs) bundled with esbuild and started in this process, on 127.0.0.1:<port>, in place of
// workerd. Same bindings, same assets (the repository's public/), and no scheduler of its own:
// the dev ticker fires scheduled(), as it fires the Worker's cron. A change under src/ or public/
// restarts it with the new code, as the workerd runtime reloads. Tests and the benchmark start
// `groupq serve` processes of their own (server-process.mjs); this is the dev stack's one.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { reloadOnChange } from './dev-reload.mjs';

/**
 * Bundles src/server/index.ts into `<cwd>/.cache/dev-server/server-<n>.mjs`, imports it and
 * removes the file (the module stays loaded): a dev run leaves no bundle behind.
 * @param {string} cwd the repository
 * @returns {Promise<typeof import('../src/server/index')>}
 */
export async function loadServer(cwd) {
  const dir = path.join(cwd, '.cache', 'dev-server');
  mkdirSync(dir, { recursive: true });
  // A name of its own per build: an ES module is imported once per URL.
  const outfile = path.join(dir, `server-${process.pid}-${Date.now()}.mjs`);
  await build({
    entryPoints: [path.join(cwd, 'src/server/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outfile,
    logLevel: 'error',
    absWorkingDir: cwd,
    // Bundled CommonJS (@upstash/redis' dependencies) may call require: give it Node's.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  try {
    return await import(pathToFileURL(outfile).href);
  } finally {
    rmSync(outfile, { force: true });
  }
}

/**
 * Starts the server and resolves once GET /health answers {"ok":true}. A change under src/ or
 * public/ rebuilds the bundle and starts it in place of the running server (which first ends the
 * work it has under way); a build error is printed and the running server kept.
 * @param {{ port: number, bindings: Record<string, string>, cwd: string, log: (line: string) => void, signal?: AbortSignal, startTimeoutMs?: number }} options
 */
export async function startDevServer({ port, bindings, cwd, log, signal, startTimeoutMs = 60_000 }) {
  /** @param {typeof import('../src/server/index')} module */
  const start = (module) =>
    module.startServer({ env: bindings, port, hostname: '127.0.0.1', assets: path.join(cwd, 'public'), cron: null }).catch((error) => {
      // What the workerd runtime says of a busy PORT (dev-worker.mjs), so the fix reads the same.
      const code = /** @type {NodeJS.ErrnoException} */ (error).code;
      if (code === 'EADDRINUSE' || code === 'EACCES') throw new Error(`PORT ${port} is not free on 127.0.0.1 (${code}); set PORT to another port`);
      throw error;
    });
  let server = await start(await loadServer(cwd));
  const deadline = Date.now() + startTimeoutMs;
  let last = 'no answer yet';
  for (;;) {
    if (signal?.aborted || Date.now() > deadline) {
      await server.stop();
      throw new Error(signal?.aborted ? 'stopped while the server was starting' : `the server did not answer GET /health with {"ok":true} within ${startTimeoutMs} ms (last: ${last})`);
    }
    try {
      const res = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      last = `${res.status} ${text.slice(0, 200)}`;
      if (res.ok && JSON.parse(text).ok === true) break;
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  const watcher = reloadOnChange(cwd, async () => {
    let module;
    try {
      module = await loadServer(cwd);
    } catch (error) {
      log(`reload failed, the server runs the code it had: ${/** @type {Error} */ (error).message}`);
      return;
    }
    await server.stop();
    try {
      server = await start(module);
      log('reloaded after a change under src/ or public/');
    } catch (error) {
      log(`reload failed, the server is down until the next change: ${/** @type {Error} */ (error).message}`);
    }
  });

  return {
    url: server.url,
    scheduled: () => server.scheduled(),
    async stop() {
      await watcher.stop();
      await server.stop();
    },
    /** The server runs in this process: it ends with it, or when stop() ran. */
    exited: new Promise(() => {}),
  };
}
