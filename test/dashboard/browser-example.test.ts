// examples/browser, as a user runs it: `node examples/browser/serve.mjs` serves the page and the
// built client (dist/client.js) on an origin of its own, and Chromium enqueues through the form
// with a publish token under CORS. The job must reach a real endpoint; an origin the queue does
// not allow gets nothing written and the page says why; a wrong token shows the API's 401.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';
import { expectJson, putQueue, waitForState } from '../http/support';
import { type Watch, launchChromium, watch } from './browser';

const OPEN_TOKEN = 'pub_browser_example_0001';
const CLOSED_TOKEN = 'pub_closed_example_0001';

let stack: PrivateStack;
let worker: RunningWorker;
let endpoint: Endpoint;
let browser: Browser;
let server: ChildProcess;
let origin: string;
let context: BrowserContext;
let page: Page;
let seen: Watch;

/** Starts serve.mjs on a free port; resolves with the origin it prints. */
async function serveExample(): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(process.execPath, ['examples/browser/serve.mjs'], { env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`serve.mjs exited with ${code} before listening`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      const match = /^browser example: (http:\/\/[^/]+)\/$/.exec(line);
      if (match) return match[1]!;
    }
    throw new Error('serve.mjs closed stdout before listening');
  })();
  return { child, origin: await Promise.race([listening, exited]) };
}

beforeAll(async () => {
  stack = await startPrivateStack();
  let served: Awaited<ReturnType<typeof serveExample>>;
  [worker, endpoint, browser, served] = await Promise.all([startWorker(stack), startEndpoint(), launchChromium(), serveExample()]);
  ({ child: server, origin } = served);
  await putQueue(worker, 'browser', { endpoint: endpoint.url, allowedOrigins: [origin], publishTokens: [OPEN_TOKEN], keepCompleted: 10 });
  await putQueue(worker, 'closed', { endpoint: endpoint.url, publishTokens: [CLOSED_TOKEN] });
  context = await browser.newContext();
  // Refusals are logged by Chromium on purpose here: the CORS block, and the 401.
  seen = watch(context, [origin, worker.url], [/blocked by CORS policy/, /Failed to load resource: net::ERR_FAILED/, /status of 401/]);
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
  await endpoint?.close();
  await worker?.dispose();
  await stack?.close();
});

async function enqueueFromPage(queue: string, token: string, data: string): Promise<string> {
  await page.goto(`${origin}/?url=${encodeURIComponent(worker.url)}&queue=${queue}&group=user:7`);
  await page.locator('#token').fill(token);
  await page.locator('#data').fill(data);
  await page.locator('#result').evaluate((el) => (el.textContent = ''));
  await page.getByRole('button', { name: 'Enqueue' }).click();
  await page.locator('#result', { hasText: /Enqueued|Refused/ }).waitFor();
  return page.locator('#result').innerText();
}

describe('examples/browser', () => {
  it('serves the page and the built client on its own origin', async () => {
    const html = await fetch(`${origin}/`);
    expect(html.status).toBe(200);
    expect(await html.text()).toContain("from './groupq-client.js'");
    const client = await fetch(`${origin}/groupq-client.js`);
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toContain('text/javascript');
    expect(await client.text()).toContain('GroupqClient');
    expect(new URL(origin).origin).not.toBe(new URL(worker.url).origin);
  });

  it('enqueues with the publish token from an allowed origin; the job reaches the endpoint', async () => {
    const result = await enqueueFromPage('browser', OPEN_TOKEN, '{"cart": 3}');
    const id = /^Enqueued job (\S+) \(/.exec(result)?.[1];
    expect(id, result).toBeDefined();
    const [delivered] = await endpoint.waitFor(1);
    expect(delivered!.job).toMatchObject({ id, queue: 'browser', group: 'user:7', data: { cart: 3 } });
    const job = await waitForState(worker, 'browser', id!, 'completed');
    expect(job.data).toEqual({ cart: 3 });
  });

  it('an origin the queue does not allow: refused before anything is written, and the page says so', async () => {
    const result = await enqueueFromPage('closed', CLOSED_TOKEN, '{"cart": 4}');
    expect(result).toContain('Refused: NETWORK_ERROR');
    expect(result).toContain(`Is ${origin} in the queue's allowedOrigins?`);
    const { counts } = await expectJson(await worker.api('/v1/queues/closed'), 200);
    expect(counts).toEqual({ waiting: 0, delayed: 0, active: 0, completed: 0, failed: 0, cancelled: 0, expired: 0, groups: 0 });
    expect(endpoint.received.filter((r) => r.job.queue === 'closed')).toEqual([]);
  });

  it("a wrong token from an allowed origin shows the API's 401", async () => {
    const before = endpoint.received.length;
    const result = await enqueueFromPage('browser', 'pub_not_issued_to_anyone', '{}');
    expect(result).toContain('Refused: UNAUTHORIZED (HTTP 401)');
    expect(endpoint.received).toHaveLength(before);
  });

  it('no unexpected console errors, and requests only to the page and the groupq origins', () => {
    // The only failures are the enqueue the browser blocked because the preflight was refused:
    // sent once and retried 3 times (the client gave the job an id, so a retry is safe, and a
    // blocked request looks to it like a network error).
    expect(seen.problems).toEqual(Array(4).fill(`request failed: ${worker.url}/v1/queues/closed/jobs net::ERR_FAILED`));
    expect(seen.foreign).toEqual([]);
  });
});
