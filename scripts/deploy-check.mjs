#!/usr/bin/env node
// `npm run deploy:check`: what `wrangler deploy` needs, checked on this machine, offline, before
// anything is shipped. It reads wrangler.toml with wrangler's own reader, builds the Worker with
// `wrangler deploy --dry-run` (no login needed), and parses the bindings a deploy would give the
// Worker ([vars] plus the secrets) with the Worker's own zod schema (src/handlers/settings.ts),
// so a value passes here exactly when the Worker accepts it. Secret values come from the
// environment, or from --secrets-file (.env or JSON, the formats `wrangler secret bulk` and
// `wrangler deploy --secrets-file` take), which wins over the environment. One line per check;
// exit 1 when something a deploy needs is missing or wrong. Values of secrets are never printed.
// With --save-secrets <file>, once every check passes, it writes the secrets it checked there
// (JSON, readable by the owner alone) for `wrangler deploy --secrets-file <file>`: a first deploy
// then uploads the code and every secret, GROUPQ_PUBLIC_URL included, as one version, so the
// Worker never runs without them (it would answer 500 to every request; docs/deploy.md step 4).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, parseEnv, promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { supportedCompatibilityDate } from 'miniflare';
import { unstable_readConfig } from 'wrangler';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const wranglerBin = path.join(path.dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js');

const USAGE = `usage: npm run deploy:check [-- --secrets-file <file>] [-- --save-secrets <file>] [-- --config <wrangler.toml>]
  --secrets-file <file>  secret values as KEY=VALUE lines or a JSON object (default: the environment)
  --save-secrets <file>  once every check passes, write the checked secrets there as JSON, for
                         npx wrangler deploy --secrets-file <file> (delete the file afterwards)
  --config <file>        the Wrangler configuration to check (default: wrangler.toml)`;

/** Where to get each secret, printed with the fix when it is missing or invalid. */
const SECRET_HINTS = {
  UPSTASH_REDIS_REST_URL: 'the REST URL on your Upstash database page, https://<db>.upstash.io',
  UPSTASH_REDIS_REST_TOKEN: 'the REST token on your Upstash database page, not the read-only one',
  GROUPQ_ADMIN_TOKEN: 'make one: openssl rand -hex 24',
  GROUPQ_SIGNING_SECRET: 'make one: echo "whsec_$(openssl rand -base64 32)"',
  GROUPQ_SIGNING_SECRET_NEXT: 'only while rotating the signing secret',
  GROUPQ_METRICS_TOKEN: 'only for Prometheus: a token that opens GET /metrics alone (docs/metrics.md); make one: openssl rand -hex 24',
  GROUPQ_REDIS_POOL: 'only for a pool of databases: a JSON array of {"url","token"} of the databases after the first (docs/scaling-out.md)',
  GROUPQ_PUBLIC_URL: "the Worker's URL, known before its first deploy: <subdomain> is your account's workers.dev subdomain (dash.cloudflare.com, Workers & Pages), or use your own domain",
};

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const MIB = 1024 * 1024;

/** @typedef {{ status: 'ok' | 'note' | 'missing' | 'invalid' | 'failed', text: string, fix?: string }} Check */

/** The Worker's binding schema, bundled from its TypeScript source (Node 20 cannot strip types). */
async function loadEnvSchema() {
  const bundled = await build({
    entryPoints: [path.join(repoRoot, 'src/handlers/settings.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    logLevel: 'error',
  });
  const code = Buffer.from(bundled.outputFiles[0].text).toString('base64');
  return (await import(`data:text/javascript;base64,${code}`)).envSchema;
}

/** @param {string} file @returns {Record<string, string>} */
function readValues(file) {
  const text = readFileSync(file, 'utf8');
  if (!text.trimStart().startsWith('{')) return parseEnv(text);
  return Object.fromEntries(Object.entries(JSON.parse(text)).map(([name, value]) => [name, String(value)]));
}

/** @param {string} date */
function isDate(date) {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) && !Number.isNaN(Date.parse(date));
}

/** @returns {Check[]} */
function checkConfig(config) {
  const checks = [];
  checks.push(
    config.name
      ? { status: 'ok', text: `name = "${config.name}" (the Worker's URL: https://${config.name}.<subdomain>.workers.dev)` }
      : { status: 'missing', text: 'name', fix: 'add name = "groupq" to wrangler.toml' },
  );
  checks.push(
    config.main && existsSync(config.main)
      ? { status: 'ok', text: `main = ${path.relative(process.cwd(), config.main)}` }
      : { status: 'missing', text: `main (${config.main ?? 'not set'})`, fix: 'main = "src/index.ts" in wrangler.toml' },
  );
  // Cloudflare refuses a date in the future; one newer than the local workerd supports would ship
  // behaviour that `npm run dev` and the tests never ran.
  const newest = [new Date().toISOString().slice(0, 10), supportedCompatibilityDate].sort()[0];
  const date = config.compatibility_date;
  checks.push(
    date && isDate(date) && date <= newest
      ? { status: 'ok', text: `compatibility_date = ${date}` }
      : {
          status: 'invalid',
          text: `compatibility_date = ${date ?? '(not set)'}: must be a date, not in the future, and no later than ${supportedCompatibilityDate}, the newest the local workerd runs (npm run dev, the tests)`,
          fix: `compatibility_date = "${supportedCompatibilityDate}" in wrangler.toml`,
        },
  );
  const crons = config.triggers?.crons ?? [];
  if (crons.length === 0) {
    checks.push({
      status: 'missing',
      text: 'cron trigger: without it delays, retries and expired leases wait for the next request',
      fix: 'add [triggers] crons = ["* * * * *"] to wrangler.toml',
    });
  } else {
    checks.push({ status: 'ok', text: `cron trigger ${crons.join(', ')}` });
    if (!crons.includes('* * * * *')) {
      checks.push({ status: 'note', text: 'timers fire on that schedule; "* * * * *" (every minute) is the finest' });
    }
  }
  checks.push(
    config.placement
      ? { status: 'ok', text: `placement ${JSON.stringify(config.placement)}` }
      : {
          status: 'note',
          text: 'no [placement]: the Worker runs near each caller, every Redis call crosses to the database region',
          fix: 'put the Worker next to Upstash: [placement] region = "aws:<region>" (or "gcp:<region>") of your database, see docs/deploy.md',
        },
  );
  return checks;
}

/** Bundles the Worker as `wrangler deploy` would, without uploading it. @returns {Promise<Check>} */
async function dryRun(configPath) {
  const outDir = mkdtempSync(path.join(os.tmpdir(), 'groupq-deploy-check-'));
  try {
    await promisify(execFile)(process.execPath, [wranglerBin, 'deploy', '--dry-run', '--outdir', outDir, '--config', configPath], {
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
    });
    const gzipBytes = gzipSync(readFileSync(path.join(outDir, 'index.js'))).byteLength;
    const size = `${(gzipBytes / 1024).toFixed(1)} KiB gzipped`;
    if (gzipBytes <= 3 * MIB) return { status: 'ok', text: `wrangler deploy --dry-run: ${size} (Workers Free allows 3 MiB)` };
    if (gzipBytes <= 10 * MIB) return { status: 'note', text: `wrangler deploy --dry-run: ${size}, over Workers Free's 3 MiB (Paid allows 10 MiB)` };
    return { status: 'failed', text: `wrangler deploy --dry-run: ${size}, over the 10 MiB Cloudflare accepts` };
  } catch (error) {
    const output = `${error.stderr ?? ''}${error.stdout ?? ''}`.trim().split('\n').slice(-15).join('\n');
    return { status: 'failed', text: `wrangler deploy --dry-run failed:\n${output || error.message}` };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/**
 * Parses [vars] plus the secrets with the Worker's schema; every binding of the schema gets a line.
 * A binding with a default is a setting, kept in [vars]; the others are secrets.
 * @param {{ envSchema: any, vars: Record<string, unknown>, secrets: Record<string, string>, sources: Record<string, string>, devValues: Record<string, string>, workerName?: string }} input
 * @returns {Check[]}
 */
function checkBindings({ envSchema, vars, secrets, sources, devValues, workerName }) {
  const env = { ...vars, ...secrets };
  const parsed = envSchema.safeParse(env);
  const issues = new Map((parsed.success ? [] : parsed.error.issues).map((issue) => [issue.path[0], issue.message]));
  const checks = [];
  for (const [name, schema] of Object.entries(envSchema.shape)) {
    const value = env[name];
    const unset = value === undefined || value === '';
    if (isSetting(schema)) {
      const message = issues.get(name);
      if (message) checks.push({ status: 'invalid', text: `${name} = "${value}" in [vars]: ${message}`, fix: `correct ${name} in [vars] of wrangler.toml` });
      else if (unset) checks.push({ status: 'ok', text: `${name}: not in [vars], the Worker uses its default ${schema.parse(undefined)}` });
      else checks.push({ status: 'ok', text: `${name} = "${value}"` });
      continue;
    }
    const where = name in vars ? 'wrangler.toml [vars]' : sources[name];
    // As docs/deploy.md does it: every secret, the public URL included, is exported and checked
    // (step 3), then uploaded with the code in one version (step 4).
    const hint = SECRET_HINTS[name] ?? 'see docs/deploy.md';
    const example = name === 'GROUPQ_PUBLIC_URL' ? `https://${workerName || '<name>'}.<subdomain>.workers.dev` : '<value>';
    const fix = `export ${name}=${example}   # ${hint}; docs/deploy.md step 4 uploads it with the Worker`;
    const message = issues.get(name) ?? (unset ? undefined : deployProblem(name, String(value), devValues, workerName));
    if (message && unset) checks.push({ status: 'missing', text: `secret ${name}`, fix });
    else if (message) checks.push({ status: 'invalid', text: `secret ${name} (from ${where}): ${message}`, fix });
    else if (unset && name === 'GROUPQ_PUBLIC_URL' && vars.GROUPQ_ALLOW_HTTP_LOOPBACK !== 'true') {
      // The Worker refuses to start without it (settingsOf): callback URLs never come from a request's Host.
      checks.push({ status: 'missing', text: `secret ${name}: the Worker refuses to start without it (every request would answer 500)`, fix });
    } else if (unset) checks.push({ status: 'ok', text: `secret ${name}: not set (optional)` });
    else checks.push({ status: 'ok', text: `secret ${name} (from ${where})` });
    if (name in vars) checks.push({ status: 'note', text: `${name} is in [vars], in plain text in wrangler.toml`, fix: `remove it there and ${fix}` });
  }
  for (const name of Object.keys(vars).filter((name) => !(name in envSchema.shape))) {
    checks.push({ status: 'note', text: `${name} in [vars]: the Worker does not read it (a typo?)` });
  }
  if (vars.GROUPQ_ALLOW_HTTP_LOOPBACK === 'true') {
    checks.push({ status: 'note', text: 'GROUPQ_ALLOW_HTTP_LOOPBACK = "true": a deployed Worker cannot reach your localhost', fix: 'set it to "false"' });
  }
  return checks;
}

/** @param {any} schema */
function isSetting(schema) {
  return schema.def.type === 'default';
}

/**
 * What the schema allows but a deployed Worker cannot use: this repo's public dev values, loopback
 * URLs, and a public URL on the workers.dev address of another Worker (callbacks would go there).
 */
function deployProblem(name, value, devValues, workerName) {
  if (value !== '' && value === devValues[name]) return 'the development value from .dev.vars.example, which is public';
  if (URL.canParse(value) && LOOPBACK_HOSTS.has(new URL(value).hostname)) return 'points at loopback, which a deployed Worker cannot reach';
  const host = URL.canParse(value) ? new URL(value).hostname : '';
  if (name === 'GROUPQ_PUBLIC_URL' && workerName && host.endsWith('.workers.dev') && host.split('.')[0] !== workerName) {
    return `a workers.dev URL of another Worker: this one, "${workerName}" in wrangler.toml, is https://${workerName}.<subdomain>.workers.dev`;
  }
  return undefined;
}

/**
 * Writes the checked secrets (set ones only) as JSON, readable by the owner alone: the file
 * `wrangler deploy --secrets-file` uploads with the code. Returns their names.
 * @param {string} file
 * @param {Record<string, string>} secrets
 */
function saveSecrets(file, secrets) {
  const set = Object.fromEntries(Object.entries(secrets).filter(([, value]) => value !== ''));
  // Removed first: `mode` applies to a file created, never to one already there.
  rmSync(file, { force: true });
  writeFileSync(file, `${JSON.stringify(set, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return Object.keys(set);
}

async function main() {
  const { values: args } = parseArgs({
    options: {
      'secrets-file': { type: 'string' },
      'save-secrets': { type: 'string' },
      config: { type: 'string', default: 'wrangler.toml' },
      help: { type: 'boolean' },
    },
  });
  if (args.help) return console.log(USAGE);
  if (!existsSync(args.config)) {
    console.error(`deploy:check: no ${args.config} here\n${USAGE}`);
    process.exit(2);
  }
  const config = unstable_readConfig({ config: args.config });
  const envSchema = await loadEnvSchema();
  const vars = config.vars ?? {};
  const fromFile = args['secrets-file'] ? readValues(args['secrets-file']) : {};
  const secrets = {};
  const sources = {};
  const secretNames = Object.entries(envSchema.shape).filter(([name, schema]) => !isSetting(schema) && !(name in vars));
  for (const [name] of secretNames) {
    const [value, source] = name in fromFile ? [fromFile[name], args['secrets-file']] : [process.env[name], 'the environment'];
    if (value !== undefined) [secrets[name], sources[name]] = [value, source];
  }
  const devValues = parseEnv(readFileSync(path.join(repoRoot, '.dev.vars.example'), 'utf8'));
  const checks = [...checkConfig(config), await dryRun(args.config), ...checkBindings({ envSchema, vars, secrets, sources, devValues, workerName: config.name })];

  for (const { status, text, fix } of checks) {
    console.log(`${status.padEnd(8)}${text}`);
    if (fix) console.log(`${' '.repeat(8)}fix: ${fix}`);
  }
  const problems = checks.filter(({ status }) => status === 'missing' || status === 'invalid' || status === 'failed');
  if (checks.some(({ status, text }) => status === 'missing' && text.startsWith('secret '))) {
    console.log(
      '\nSecrets already set on the Worker are not visible offline: `npx wrangler secret list` names them.\n' +
        'To check their values here, export them or pass --secrets-file <file>.',
    );
  }
  if (problems.length > 0) {
    console.log(`\ndeploy:check: ${problems.length} problem${problems.length === 1 ? '' : 's'} to fix before \`npx wrangler deploy\``);
    process.exit(1);
  }
  const saveTo = args['save-secrets'];
  if (saveTo) {
    const names = saveSecrets(saveTo, secrets);
    console.log(`\nsaved   ${names.join(', ')} to ${saveTo} (only you can read it)`);
    console.log(`deploy:check: ready: npx wrangler deploy --secrets-file ${saveTo} && rm ${saveTo}`);
    return;
  }
  // A first deploy needs its secrets in the same upload: without them the Worker answers 500.
  console.log('\ndeploy:check: ready: npx wrangler deploy (a first deploy takes its secrets along: --save-secrets, docs/deploy.md step 4)');
}

await main();
