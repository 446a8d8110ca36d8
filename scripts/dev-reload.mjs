// What both runtimes of `npm run dev` do on a change under src/ or public/ (dev-worker.mjs,
// dev-server.mjs): run their reload, once per burst of saves (an editor writing several files),
// one at a time, and once more for changes that came during one.
import { watch } from 'node:fs';
import path from 'node:path';

/** A burst of saves makes one reload. */
const RELOAD_DEBOUNCE_MS = 150;

/**
 * Watches `<cwd>/src` and `<cwd>/public`; `reload` must not throw (it prints its own failure).
 * @param {string} cwd
 * @param {() => Promise<void>} reload
 * @returns {{ stop(): Promise<void> }} stop: no more reloads, and the one under way ended
 */
export function reloadOnChange(cwd, reload) {
  /** @type {Promise<void> | null} */
  let reloading = null;
  let again = false;
  /** @type {NodeJS.Timeout | undefined} */
  let debounce;
  const onChange = () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => {
      if (reloading) {
        again = true;
        return;
      }
      reloading = (async () => {
        do {
          again = false;
          await reload();
        } while (again);
        reloading = null;
      })();
    }, RELOAD_DEBOUNCE_MS);
  };
  const watchers = ['src', 'public'].map((dir) => watch(path.join(cwd, dir), { recursive: true }, onChange));
  return {
    async stop() {
      for (const watcher of watchers) watcher.close();
      clearTimeout(debounce);
      await reloading;
    },
  };
}
