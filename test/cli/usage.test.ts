// The CLI's usage errors and help, which never reach a Worker: exit code 2, a one-line reason on
// stderr (JSON with --json) pointing at the right --help, nothing on stdout; the missing
// connection names GROUPQ_URL/GROUPQ_TOKEN. No Worker runs here: the URL points at a closed
// port, so a request made by mistake would fail with exit 1, not 2.
import { describe, expect, test } from 'vitest';
import { version } from '../../package.json';
import { cli } from './support';

const env = { GROUPQ_URL: 'http://127.0.0.1:9', GROUPQ_TOKEN: 'secret-token-never-printed' };

describe('usage errors exit 2 before any request', () => {
  test.each([
    [['frobnicate'], /^groupq: unknown command "frobnicate"\n\(see "groupq --help"\)\n$/],
    [[], /^groupq: no command given\n/],
    [['jobs', 'orders', '--colour'], /^groupq: unknown option '--colour'\n\(see "groupq jobs --help"\)\n$/],
    [['queues', '--group', 'g'], /^groupq: unknown option '--group'\n/],
    [['jobs'], /^groupq: missing <queue>\n\(see "groupq jobs --help"\)\n$/],
    [['retry', 'orders'], /^groupq: missing <id\.\.\.>\n/],
    [['promote', 'orders', 'a', 'b'], /^groupq: unexpected argument "b"\n/],
    [['jobs', 'orders', '--limit'], /^groupq: option '--limit <value>' argument missing\n/],
    [['jobs', 'orders', '--limit', '0'], /^groupq: --limit must be a whole number, 1 to 1000 \(got "0"\)\n/],
    [['jobs', 'orders', '--limit', '2.5'], /--limit must be a whole number/],
    [['monitor', 'orders', '--interval', '10'], /^groupq: --interval must be a whole number, 100 to 3600000 \(got "10"\)\n/],
    // Beyond 2^31 - 1 ms Node's timers fire after 1 ms: the monitor would poll the API nonstop.
    [['monitor', 'orders', '--interval', '3000000000'], /^groupq: --interval must be a whole number, 100 to 3600000 \(got "3000000000"\)\n/],
    [['enqueue', 'orders', '--data', '{}'], /^groupq: missing --group <name>\n\(see "groupq enqueue --help"\)\n$/],
    [['enqueue', 'orders', '--group', 'g', '--delay', 'soon'], /^groupq: --delay must be a whole number, at least 0 \(got "soon"\)\n/],
    [['enqueue', 'orders', '--group', 'g', '--data', '{sku: 1}'], /^groupq: --data is not valid JSON: .+\n/],
    [['enqueue', 'orders', '--group', 'g', '--priority', '1001'], /^groupq: --priority must be a whole number, -1000 to 1000 \(got "1001"\)\n/],
    [['enqueue', 'orders', '--group', 'g', '--priority', '1.5'], /--priority must be a whole number/],
    [['enqueue', 'orders', '--group', 'g', '--debounce-ms', '100'], /^groupq: --debounce-ms and --debounce-max-ms need --debounce-key <key>\n/],
    [['enqueue', 'orders', '--group', 'g', '--debounce-key', 'k'], /^groupq: --debounce-key needs --debounce-ms <ms>\n/],
    [['group-limits', 'orders', 'g'], /^groupq: give --concurrency, --rate-max with --rate-period-ms, --no-rate-limit, or --clear\n\(see "groupq group-limits --help"\)\n$/],
    [['group-limits', 'orders'], /^groupq: missing <group>\n/],
    [['group-limits', 'orders', 'g', '--concurrency', '0'], /^groupq: --concurrency must be a whole number, 1 to 1000 \(got "0"\)\n/],
    [['group-limits', 'orders', 'g', '--rate-max', '5'], /^groupq: --rate-max and --rate-period-ms go together\n/],
    [['group-limits', 'orders', 'g', '--rate-max', '5', '--rate-period-ms', '1000', '--no-rate-limit'], /^groupq: give --rate-max\/--rate-period-ms or --no-rate-limit, not both\n/],
    [['group-limits', 'orders', 'g', '--clear', '--concurrency', '2'], /^groupq: --clear takes no other limit\n/],
    [['help', 'nope'], /^groupq: unknown command "nope"\n/],
    // The queue, group, repeat and status commands.
    [['queue'], /^groupq: queue needs a command: create, configure or delete\n\(see "groupq queue --help"\)\n$/],
    [['queue', 'frob', 'orders'], /^groupq: unknown command "queue frob" \(queue takes create, configure or delete\)\n\(see "groupq queue --help"\)\n$/],
    [['help', 'queue', 'nope'], /^groupq: unknown command "queue nope"/],
    [['queue', 'create'], /^groupq: missing <name>\n\(see "groupq queue create --help"\)\n$/],
    [['queue', 'create', 'orders'], /^groupq: missing --endpoint <url> \(or "endpoint" in --config\)\n/],
    [['queue', 'create', 'orders', '--endpoint', 'https://x.example', '--concurrency', 'ten'], /^groupq: --concurrency must be a whole number, at least 0 \(got "ten"\)\n/],
    [['queue', 'create', 'orders', '--endpoint', 'https://x.example', '--rate-limit', '100'], /^groupq: --rate-limit is <max>\/<ms>, e\.g\. 100\/1000 for 100 a second, or none \(got "100"\)\n/],
    [['queue', 'create', 'orders', '--endpoint', 'https://x.example', '--batch', 'ten'], /^groupq: --batch is <max>\[\/<ms>\], e\.g\. 10 or 10\/500, or none \(got "ten"\)\n\(see "groupq queue create --help"\)\n$/],
    [['queue', 'create', 'orders', '--endpoint', 'https://x.example', '--batch', '10/'], /^groupq: --batch is <max>\[\/<ms>\], e\.g\. 10 or 10\/500, or none \(got "10\/"\)\n/],
    [['queue', 'configure', 'orders', '--batch', '10/500/1'], /^groupq: --batch is <max>\[\/<ms>\], e\.g\. 10 or 10\/500, or none \(got "10\/500\/1"\)\n\(see "groupq queue configure --help"\)\n$/],
    [['queue', 'configure', 'orders', '--batch', '2.5'], /^groupq: --batch is <max>\[\/<ms>\]/],
    [['queue', 'create', 'orders', '--config', '[1]'], /^groupq: --config must be a JSON object of the config's fields \(got an array\)\n/],
    [['queue', 'create', 'orders', '--config', '{endpoint: 1}'], /^groupq: --config is not valid JSON: /],
    [['queue', 'create', 'orders', '--endpoint', 'https://x.example', '--unset', 'rateLimit'], /^groupq: unknown option '--unset'\n\(see "groupq queue create --help"\)\n$/],
    [['queue', 'configure', 'orders'], /^groupq: nothing to change: give a setting flag, --config or --unset\n\(see "groupq queue configure --help"\)\n$/],
    [['queue', 'configure', 'orders', '--unset', 'colour'], /^groupq: --unset: the config has no field "colour" \(docs\/http-api\.md#queues lists them\)\n/],
    [['queue', 'configure', 'orders', '--concurrency', '2', '--unset', 'concurrency'], /^groupq: concurrency is both set and unset\n/],
    [['queue', 'configure', 'orders', '--partitions', '2'], /^groupq: unknown option '--partitions'\n/],
    [['queue', 'delete', 'orders'], /^groupq: this deletes the queue with every job, group and repeat of it: pass --yes to do it\n\(see "groupq queue delete --help"\)\n$/],
    [['queue', 'delete', 'orders', '--force'], /^groupq: unknown option '--force'\n/],
    [['groups'], /^groupq: missing <queue>\n\(see "groupq groups --help"\)\n$/],
    [['groups', 'orders', '--limit', '0'], /^groupq: --limit must be a whole number, 1 to 1000 \(got "0"\)\n/],
    [['repeats'], /^groupq: repeats needs a command: list, put or delete\n\(see "groupq repeats --help"\)\n$/],
    [['repeats', 'put', 'orders'], /^groupq: missing <key>\n\(see "groupq repeats put --help"\)\n$/],
    [['repeats', 'put', 'orders', 'nightly', '--every-ms', '1000'], /^groupq: missing --group <name>\n/],
    [['repeats', 'put', 'orders', 'nightly', '--group', 'g'], /^groupq: give one of --cron <pattern> and --every-ms <ms>\n/],
    [['repeats', 'put', 'orders', 'nightly', '--group', 'g', '--cron', '0 2 * * *', '--every-ms', '1000'], /^groupq: give one of --cron <pattern> and --every-ms <ms>\n/],
    [['repeats', 'put', 'orders', 'nightly', '--group', 'g', '--every-ms', '1000', '--tz', 'UTC'], /^groupq: --tz goes with --cron\n/],
    [['repeats', 'put', 'orders', 'nightly', '--group', 'g', '--every-ms', '1000', '--start-at', 'tomorrow'], /^groupq: --start-at is epoch ms or an ISO 8601 time like 2030-01-31T09:00:00Z \(got "tomorrow"\)\n/],
    [['repeats', 'put', 'orders', 'nightly', '--group', 'g', '--every-ms', 'hourly'], /^groupq: --every-ms must be a whole number/],
    [['repeats', 'delete', 'orders'], /^groupq: missing <key>\n/],
    [['repeats', 'list'], /^groupq: missing <queue>\n\(see "groupq repeats list --help"\)\n$/],
    [['metrics', 'orders', '--minutes', '61'], /^groupq: --minutes must be a whole number, 1 to 60 \(got "61"\)\n/],
    [['metrics'], /^groupq: missing <queue>\n/],
    [['health', 'now'], /^groupq: unexpected argument "now"\n\(see "groupq health --help"\)\n$/],
  ])('groupq %j', async (argv, stderr) => {
    const result = await cli(argv, env);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(stderr);
  });

  test('with --json the usage error is one JSON object on stderr', async () => {
    const result = await cli(['jobs', 'orders', '--colour', '--json'], env);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'USAGE', message: "unknown option '--colour'" } });
  });

  test('a missing URL or token names the variable and the flag', async () => {
    const noUrl = await cli(['queues'], { GROUPQ_TOKEN: env.GROUPQ_TOKEN });
    expect(noUrl).toMatchObject({ code: 2, stdout: '' });
    expect(noUrl.stderr).toMatch(/^groupq: no Worker URL: set GROUPQ_URL or pass --url <url>\n/);

    const noToken = await cli(['queues', '--url', env.GROUPQ_URL], {});
    expect(noToken).toMatchObject({ code: 2, stdout: '' });
    expect(noToken.stderr).toMatch(/^groupq: no admin token: set GROUPQ_TOKEN or pass --token <token>\n/);

    // An empty variable is as good as none.
    const empty = await cli(['queues'], { GROUPQ_URL: '', GROUPQ_TOKEN: env.GROUPQ_TOKEN });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('GROUPQ_URL');

    const notUrl = await cli(['queues'], { ...env, GROUPQ_URL: 'localhost:8787' });
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toMatch(/the Worker URL must be http\(s\)|not an absolute URL/);
    expect(noUrl.stderr + noToken.stderr + notUrl.stderr).not.toContain(env.GROUPQ_TOKEN);
  });

  test('flags may come before the command, and a flag value is never taken for the command', async () => {
    const result = await cli(['--json', 'jobs', '--group', 'queues']);
    // "jobs" is the command (missing <queue>), not "queues" (which takes no --group).
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stderr)).toEqual({ error: { code: 'USAGE', message: 'missing <queue>' } });
  });
});

describe('help and version', () => {
  test('--help lists every command and the connection variables, exit 0 without a connection', async () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const result = await cli(argv, {});
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const added = ['queue create <name>', 'queue configure <name>', 'queue delete <name>', 'groups <queue>', 'repeats list <queue>', 'repeats put <queue> <key>', 'repeats delete <queue> <key>', 'metrics <queue>', 'health'];
      for (const command of ['queues', 'monitor <queue>', 'enqueue <queue>', 'jobs <queue>', 'retry <queue> <id...>', 'remove', 'promote', 'pause', 'resume', 'group-limits <queue> <group>', ...added]) {
        expect(result.stdout).toContain(`  ${command}`);
      }
      expect(result.stdout).toContain('GROUPQ_URL and GROUPQ_TOKEN');
    }
  });

  test('a command\'s --help shows its own flags and examples', async () => {
    const viaFlag = await cli(['enqueue', '--help'], {});
    const viaHelp = await cli(['help', 'enqueue'], {});
    expect(viaFlag).toEqual(viaHelp);
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stdout).toMatch(/^groupq enqueue: add one job/);
    expect(viaFlag.stdout).toContain('Usage: groupq enqueue <queue> [flags]');
    for (const flag of ['--group <name>', '--data <json>', '--id <id>', '--delay <ms>', '--order-ms <n>', '--priority <n>', '--debounce-key <key>', '--url <url>', '--json']) {
      expect(viaFlag.stdout).toContain(flag);
    }
    expect((await cli(['monitor', '-h'], {})).stdout).toContain('--interval <ms>');
  });

  test("a family's --help lists its commands; each command's --help its flags, --yes required for queue delete", async () => {
    const family = await cli(['queue', '--help'], {});
    expect(family).toEqual(await cli(['help', 'queue'], {}));
    expect(family.code).toBe(0);
    expect(family.stdout).toMatch(/^groupq queue: create, configure or delete\n/);
    for (const command of ['queue create <name>', 'queue configure <name>', 'queue delete <name>']) expect(family.stdout).toContain(`  ${command}`);
    expect((await cli(['repeats', '-h'], {})).stdout).toMatch(/^groupq repeats: list, put or delete\n/);

    const create = await cli(['queue', 'create', '--help'], {});
    expect(create).toEqual(await cli(['help', 'queue', 'create'], {}));
    expect(create.stdout).toContain('Usage: groupq queue create <name> [flags]');
    for (const flag of ['--endpoint <url>', '--concurrency <n>', '--max-attempts <n>', '--timeout-ms <ms>', '--keep-completed <n>', '--keep-failed <n>', '--rate-limit <max>/<ms>', '--config <json>', '--replace']) {
      expect(create.stdout).toContain(flag);
    }
    expect((await cli(['queue', 'configure', '--help'], {})).stdout).toContain('--unset <field>');
    expect((await cli(['queue', 'delete', '--help'], {})).stdout).toMatch(/--yes is required \(no prompt\)/);
    const put = (await cli(['help', 'repeats', 'put'], {})).stdout;
    for (const flag of ['--cron <pattern>', '--every-ms <ms>', '--group <name>', '--tz <zone>', '--data <json>']) expect(put).toContain(flag);
  });

  test('--version prints the package version', async () => {
    expect(await cli(['--version'], {})).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect((await cli(['-V'], {})).stdout).toBe(`${version}\n`);
  });
});
