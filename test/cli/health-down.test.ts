// `groupq health` when a database is down: a Worker with a pool of two databases (each a
// redis-server behind its own REST bridge, test/helpers/pool.ts), the second killed with SIGKILL,
// and a Worker with one database, killed too. The Worker answers 503 with the databases' states;
// the CLI prints them, "down", and exits 1.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { type Database, startDatabase } from '../helpers/pool';
import { ADMIN_TOKEN, type RunningWorker, startWorker } from '../helpers/worker';
import { cli } from './support';

vi.setConfig({ testTimeout: 60_000 });

let dir: string;
let databases: Database[] = [];
let worker: RunningWorker;
let single: RunningWorker | undefined;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'groupq-cli-health-'));
  for (let i = 0; i < 2; i++) databases.push(await startDatabase(path.join(dir, `db${i}`)));
  const [first, second] = databases as [Database, Database];
  worker = await startWorker(
    { restUrl: first.url, restToken: first.token, redisPort: first.port, close: async () => {} },
    { GROUPQ_REDIS_POOL: JSON.stringify([{ url: second.url, token: second.token }]) },
  );
});

afterAll(async () => {
  await worker?.dispose();
  await single?.dispose();
  for (const database of databases) await database.close().catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

test('ok with every database, then down with the one killed: printed, and exit 1', async () => {
  const env = { GROUPQ_URL: worker.url, GROUPQ_TOKEN: ADMIN_TOKEN };
  expect(await cli(['health'], env)).toEqual({ code: 0, stdout: 'ok (databases 0 ok, 1 ok)\n', stderr: '' });

  await databases[1]!.kill();
  expect(await cli(['health'], env)).toEqual({ code: 1, stdout: 'down (databases 0 ok, 1 down)\n', stderr: '' });
  const machine = await cli(['health', '--json'], env);
  expect(machine).toMatchObject({ code: 1, stderr: '' });
  expect(JSON.parse(machine.stdout)).toEqual({ ok: false, redis: 'ok', databases: ['ok', 'down'] });

  await databases[1]!.restart();
  expect((await cli(['health'], env)).code).toBe(0);
});

test('one database, down: "down (redis down)", exit 1', async () => {
  const only = databases[1]!;
  single = await startWorker({ restUrl: only.url, restToken: only.token, redisPort: only.port, close: async () => {} });
  expect(await cli(['health'], { GROUPQ_URL: single.url })).toEqual({ code: 0, stdout: 'ok (redis ok)\n', stderr: '' });
  await only.kill();
  // With the admin token the Worker checks now (without it, it answers as it found within the last second).
  expect(await cli(['health'], { GROUPQ_URL: single.url, GROUPQ_TOKEN: ADMIN_TOKEN })).toEqual({ code: 1, stdout: 'down (redis down)\n', stderr: '' });
});
