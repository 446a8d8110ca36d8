// The quick start (README.md#quick-start) on each Node version of scripts/node-versions.mjs:
// `npm run dev` (scripts/dev.mjs) run by that node, with it first on PATH, must print its ready
// line; the quick start's two requests (create the example queue, enqueue a job) must get the job
// completed by the bundled example endpoint; and SIGTERM must stop the stack with exit 0.
// test/dev/dev.test.ts checks the rest of `npm run dev` on the machine's own Node.
import { readlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { NODE_VERSIONS, NODE_VERSIONS_SUPPORTED, ensureNode } from '../../scripts/node-versions.mjs';
import { type DevStack, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';

/** The dev stack's printed default admin token, as the quick start's curl commands send it. */
const headers = { authorization: 'Bearer gq_dev_admin_token', 'content-type': 'application/json' };

describe.skipIf(!NODE_VERSIONS_SUPPORTED)('the quick start on other Node versions', () => {
  describe.each(NODE_VERSIONS)('npm run dev on Node $version', (pinned) => {
    let stack: DevStack;
    let node: string;
    beforeAll(async () => {
      node = await ensureNode(pinned);
      stack = await startDevStack({ PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` }, node);
    }, READY_TIMEOUT_MS + 30_000);
    afterAll(() => stack?.dispose(), 30_000);

    test('runs on that node, and prints the ready line', () => {
      expect(readlinkSync(`/proc/${stack.child.pid}/exe`)).toBe(node);
      expect(stack.output()).toMatch(new RegExp(`^groupq dev ready: http://127\\.0\\.0\\.1:${stack.ports.port}$`, 'm'));
    });

    test("the quick start's two requests get a job completed by the example endpoint", async () => {
      const { port, examplePort } = stack.ports;
      const worker = `http://127.0.0.1:${port}/v1/queues/example`;
      const config = { endpoint: `http://127.0.0.1:${examplePort}/jobs`, keepCompleted: 100 };
      const put = await fetch(worker, { method: 'PUT', headers, body: JSON.stringify(config) });
      expect(put.status).toBe(200);
      const added = { group: 'user:42', data: { hello: 'world' } };
      const post = await fetch(`${worker}/jobs`, { method: 'POST', headers, body: JSON.stringify(added) });
      expect(post.status).toBe(201);
      const { id } = (await post.json()) as { id: string };
      let job: { state: string; result?: unknown } = { state: 'waiting' };
      const deadline = Date.now() + 20_000;
      while (job.state !== 'completed' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        job = (await (await fetch(`${worker}/jobs/${encodeURIComponent(id)}`, { headers })).json()) as typeof job;
        expect(['waiting', 'active', 'completed']).toContain(job.state);
      }
      expect(job).toMatchObject({ state: 'completed', result: { ok: true, handledBy: 'groupq example endpoint' } });
    });

    test('SIGTERM stops it with exit 0', async () => {
      stack.child.kill('SIGTERM');
      expect(await stack.exit).toEqual({ code: 0, signal: null });
    });
  });
});
