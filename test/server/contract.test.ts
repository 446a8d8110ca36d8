// The contract holds on the Node server: the same end-to-end checks as on the Worker
// (test/openapi/responses-suite.ts: every operation called, each answer checked against the
// OpenAPI document, live event streams read through the server's in-process hub, and every
// operation seen), driven through `GROUPQ_DEV_RUNTIME=node npm run dev`, as a developer runs it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type DevStack, READY_TIMEOUT_MS, startDevStack } from '../helpers/dev-stack';
import { describeContract } from '../openapi/responses-suite';

/** npm run dev's printed default admin token. */
const DEV_ADMIN_TOKEN = 'gq_dev_admin_token';

let stack: DevStack;
beforeAll(async () => {
  stack = await startDevStack({ GROUPQ_DEV_RUNTIME: 'node' });
}, READY_TIMEOUT_MS + 10_000);
afterAll(() => stack?.dispose(), 30_000);

it('is the Node server that answers, not workerd', () => {
  expect(stack.output()).toMatch(/^Worker: +starting the Node server \(groupq serve\) on /m);
});

describeContract(() => ({ url: `http://127.0.0.1:${stack.ports.port}`, adminToken: DEV_ADMIN_TOKEN }));
