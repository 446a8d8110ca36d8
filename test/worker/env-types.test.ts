// `Env` comes from `wrangler types` (worker-configuration.d.ts, committed). This test regenerates
// it from wrangler.toml and .dev.vars.example and fails when a binding was added to one but the
// types were not regenerated (`npm run types`).
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const wrangler = path.join(path.dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js');

function envInterface(file: string): string {
  const text = readFileSync(file, 'utf8');
  return text.slice(text.indexOf('interface Env {'), text.indexOf('}', text.indexOf('interface Env {')) + 1);
}

it('worker-configuration.d.ts matches wrangler.toml and .dev.vars.example', async () => {
  // Written beside the committed file: a Durable Object binding's type imports the Worker's
  // module by a path relative to the output (`import("./src/index")`).
  const out = `worker-configuration.check-${process.pid}.d.ts`;
  await promisify(execFile)(
    process.execPath,
    [wrangler, 'types', out, '--env-file', '.dev.vars.example', '--include-runtime=false', '--strict-vars=false'],
    { env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' } },
  );
  try {
    expect(envInterface('worker-configuration.d.ts')).toBe(envInterface(out));
  } finally {
    rmSync(out, { force: true });
  }
});
