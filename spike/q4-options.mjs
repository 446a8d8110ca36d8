// Spike for issue 30, question 4 (throwaway): what wrangler makes of q4-wrangler/wrangler.toml's
// [[durable_objects.bindings]] and [[migrations]]: the Miniflare worker options it would pass
// (unstable_getMiniflareWorkerOptions, the same function wrangler's dev uses), and how long
// importing wrangler takes (why scripts/worker-stack.mjs writes [assets] out by hand instead).
// Run: node spike/q4-options.mjs
import { fileURLToPath } from 'node:url';

const t0 = performance.now();
const wrangler = await import('wrangler');
const importMs = Math.round(performance.now() - t0);
const config = fileURLToPath(new URL('./q4-wrangler/wrangler.toml', import.meta.url));
const { workerOptions, externalWorkers } = wrangler.unstable_getMiniflareWorkerOptions(config);
console.log(JSON.stringify({ importWranglerMs: importMs, durableObjects: workerOptions.durableObjects, externalWorkers, compatibilityDate: workerOptions.compatibilityDate }, null, 2));
