// `npm run deploy:check` is what a user runs before `wrangler deploy` (docs/deploy.md): it
// passes on the repo's wrangler.toml with production-like secrets, and otherwise names each
// problem with the command that fixes it, without printing a secret. With --save-secrets it
// writes the secrets it checked for `wrangler deploy --secrets-file`: the first deploy's.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it, vi } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { settingsOf } from '../../src/handlers/settings';

// Each run bundles the Worker with wrangler: seconds alone, more on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

const root = path.resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'groupq-deploy-check-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GOOD_SECRETS = {
  UPSTASH_REDIS_REST_URL: 'https://eu1-example-12345.upstash.io',
  UPSTASH_REDIS_REST_TOKEN: 'AYQgASQgZXhhbXBsZS1yZXN0LXRva2Vu',
  GROUPQ_ADMIN_TOKEN: '5d41402abc4b2a76b9719d911017c592aa',
  GROUPQ_SIGNING_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  GROUPQ_PUBLIC_URL: 'https://groupq.example.workers.dev',
};

/** Runs the check with only the given variables set (none of this machine's GROUPQ_ or UPSTASH_ ones). */
async function deployCheck(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string }> {
  const cleanEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env };
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/deploy-check.mjs', ...args], { cwd: root, env: cleanEnv });
    return { code: 0, stdout };
  } catch (error) {
    const { code, stdout } = error as { code: number; stdout: string };
    return { code, stdout };
  }
}

function file(name: string, text: string): string {
  const target = path.join(dir, name);
  writeFileSync(target, text);
  return target;
}

it('passes on the repo wrangler.toml with every secret in the environment, after a dry-run build', async () => {
  const { code, stdout } = await deployCheck([], GOOD_SECRETS);
  expect(stdout).toMatch(/^ok {6}wrangler deploy --dry-run: [\d.]+ KiB gzipped/m);
  expect(stdout).toMatch(/^ok {6}cron trigger \* \* \* \* \*$/m);
  for (const name of Object.keys(GOOD_SECRETS)) expect(stdout).toContain(`ok      secret ${name} (from the environment)`);
  expect(stdout).toContain('ok      GROUPQ_MAX_SUBREQUESTS = "10000"');
  expect(stdout).not.toMatch(/^(missing|invalid|failed)/m);
  expect(stdout).toContain('deploy:check: ready: npx wrangler deploy');
  expect(code).toBe(0);
});

it('fails on a missing secret (GROUPQ_PUBLIC_URL included), a malformed one and a public dev value, naming each with its fix', async () => {
  const secretsFile = file(
    'secrets.env',
    [
      `UPSTASH_REDIS_REST_URL=${GOOD_SECRETS.UPSTASH_REDIS_REST_URL}`,
      'GROUPQ_ADMIN_TOKEN=gq_dev_admin_token',
      'GROUPQ_SIGNING_SECRET=whsec_dG9vLXNob3J0',
    ].join('\n'),
  );
  // The file wins over the environment.
  const { code, stdout } = await deployCheck(['--secrets-file', secretsFile], { GROUPQ_SIGNING_SECRET: GOOD_SECRETS.GROUPQ_SIGNING_SECRET });
  expect(stdout).toContain(
    'missing secret UPSTASH_REDIS_REST_TOKEN\n        fix: export UPSTASH_REDIS_REST_TOKEN=<value>   # the REST token on your Upstash database page',
  );
  expect(stdout).toContain(
    `invalid secret GROUPQ_SIGNING_SECRET (from ${secretsFile}): expected whsec_ followed by at least 16 bytes of base64\n` +
      '        fix: export GROUPQ_SIGNING_SECRET=<value>   # make one: echo "whsec_$(openssl rand -base64 32)"; docs/deploy.md step 4 uploads it with the Worker',
  );
  expect(stdout).toContain(
    `invalid secret GROUPQ_ADMIN_TOKEN (from ${secretsFile}): the development value from .dev.vars.example, which is public\n` +
      '        fix: export GROUPQ_ADMIN_TOKEN=<value>   # make one: openssl rand -hex 24; docs/deploy.md step 4 uploads it with the Worker',
  );
  expect(stdout).toContain(`ok      secret UPSTASH_REDIS_REST_URL (from ${secretsFile})`);
  expect(stdout).toContain('`npx wrangler secret list` names them');
  expect(stdout).not.toContain('whsec_dG9vLXNob3J0');
  // A deployed Worker refuses to start without its public URL (it never takes a request's Host):
  // it is set before the first deploy, from the Worker's name, and goes up with the others.
  expect(stdout).toContain(
    'missing secret GROUPQ_PUBLIC_URL: the Worker refuses to start without it (every request would answer 500)\n' +
      "        fix: export GROUPQ_PUBLIC_URL=https://groupq.<subdomain>.workers.dev   # the Worker's URL, known before its first deploy",
  );
  expect(stdout).toMatch(/GROUPQ_PUBLIC_URL=.*; docs\/deploy\.md step 4 uploads it with the Worker$/m);
  expect(stdout).toContain('deploy:check: 4 problems to fix before `npx wrangler deploy`');
  expect(code).toBe(1);
});

it('fails on a wrangler.toml without a cron trigger, with a future compatibility date and a bad var', async () => {
  const config = file(
    'wrangler.toml',
    [
      'name = "groupq"',
      `main = ${JSON.stringify(path.join(root, 'src/index.ts'))}`,
      'compatibility_date = "2999-01-01"',
      '[vars]',
      'GROUPQ_SCRIPT_KEY_LOCKING = "yes"',
      'GROUPQ_MAX_SUBREQUEST = "50"',
    ].join('\n'),
  );
  const { code, stdout } = await deployCheck(['--config', config], GOOD_SECRETS);
  expect(stdout).toMatch(/^invalid compatibility_date = 2999-01-01: must be a date, not in the future/m);
  expect(stdout).toContain('missing cron trigger');
  expect(stdout).toContain('fix: add [triggers] crons = ["* * * * *"] to wrangler.toml');
  expect(stdout).toMatch(/^invalid GROUPQ_SCRIPT_KEY_LOCKING = "yes" in \[vars\]: .+\n {8}fix: correct GROUPQ_SCRIPT_KEY_LOCKING in \[vars\] of wrangler.toml/m);
  expect(stdout).toContain('ok      GROUPQ_MAX_SUBREQUESTS: not in [vars], the Worker uses its default 10000');
  expect(stdout).toContain('note    GROUPQ_MAX_SUBREQUEST in [vars]: the Worker does not read it (a typo?)');
  expect(code).toBe(1);
});

// The first deploy (docs/deploy.md steps 3-4, README.md#deploy): every secret, GROUPQ_PUBLIC_URL
// included, is known and checked before it, and goes up with the code as one version, so the
// Worker never runs without them (it would answer 500 to every request and fail its cron).
it('the first deploy: --save-secrets writes what it checked, which wrangler deploys with the code, and with which the Worker starts', async () => {
  const saved = path.join(dir, 'first-deploy.json');
  const { code, stdout } = await deployCheck(['--save-secrets', saved], GOOD_SECRETS);
  expect(stdout).toContain(`saved   ${Object.keys(GOOD_SECRETS).join(', ')} to ${saved} (only you can read it)`);
  expect(stdout).toContain(`deploy:check: ready: npx wrangler deploy --secrets-file ${saved} && rm ${saved}`);
  expect(code).toBe(0);
  expect(statSync(saved).mode & 0o777).toBe(0o600);
  const secrets = JSON.parse(readFileSync(saved, 'utf8')) as Record<string, string>;
  expect(secrets).toEqual(GOOD_SECRETS);

  // wrangler puts every one of them in the upload of the code (a dry run lists its bindings).
  const wrangler = path.join(root, 'node_modules/wrangler/bin/wrangler.js');
  const out = path.join(dir, 'dry-run');
  const dryRun = await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', out, '--secrets-file', saved], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), WRANGLER_SEND_METRICS: 'false' },
  });
  for (const name of Object.keys(GOOD_SECRETS)) expect(dryRun.stdout).toContain(`env.${name} ("(hidden)")`);

  // And the Worker starts with that upload's bindings, [vars] and the file: no BindingsError (500).
  const { vars } = unstable_readConfig({ config: path.join(root, 'wrangler.toml') });
  const settings = settingsOf({ ...vars, ...secrets } as unknown as Env);
  expect(settings.publicUrl).toBe(GOOD_SECRETS.GROUPQ_PUBLIC_URL);
});

it('writes no secrets file while a check fails, and refuses a public URL of another Worker', async () => {
  const saved = path.join(dir, 'refused.json');
  const { code, stdout } = await deployCheck(['--save-secrets', saved], { ...GOOD_SECRETS, GROUPQ_PUBLIC_URL: 'https://my-worker.example.workers.dev' });
  expect(stdout).toContain(
    'invalid secret GROUPQ_PUBLIC_URL (from the environment): a workers.dev URL of another Worker: this one, "groupq" in wrangler.toml, is https://groupq.<subdomain>.workers.dev',
  );
  expect(code).toBe(1);
  expect(existsSync(saved)).toBe(false);
});

it('the README and docs/deploy.md set GROUPQ_PUBLIC_URL before the check and deploy it with the code, never after', async () => {
  for (const page of ['README.md', 'docs/deploy.md']) {
    const text = readFileSync(path.join(root, page), 'utf8');
    const [exported, check, deploy] = [
      text.indexOf('export GROUPQ_PUBLIC_URL='),
      text.indexOf('npm run deploy:check -- --save-secrets'),
      text.indexOf('npx wrangler deploy --secrets-file'),
    ];
    expect([exported, check, deploy].every((at) => at >= 0), page).toBe(true);
    expect(exported < check && check < deploy, page).toBe(true);
    // No command to paste puts it after the deploy (prose may say how to correct a mistyped one).
    const commands = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) => block[1]).join('\n');
    expect(commands, page).not.toMatch(/secret put GROUPQ_PUBLIC_URL/);
  }
});
