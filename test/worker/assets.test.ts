// The tests' Miniflare serves public/ with the [assets] settings that scripts/worker-stack.mjs
// writes out (reading them through wrangler would cost seconds per test file): they must be the
// ones wrangler derives from wrangler.toml for `wrangler dev` and deploy.
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { expect, it } from 'vitest';
import { ASSETS } from '../../scripts/worker-stack.mjs';

it("worker-stack.mjs's assets options are wrangler.toml's [assets]", () => {
  const { assets } = unstable_getMiniflareWorkerOptions('wrangler.toml').workerOptions;
  expect(assets?.directory).toBe(ASSETS.directory);
  expect(assets?.binding).toBe(ASSETS.binding);
  expect(assets?.routerConfig).toEqual({ ...ASSETS.routerConfig, static_routing: { asset_worker: [], ...ASSETS.routerConfig.static_routing } });
  expect({ html_handling: assets?.assetConfig?.html_handling, not_found_handling: assets?.assetConfig?.not_found_handling }).toEqual(ASSETS.assetConfig);
});
