// What each browser test file of the dashboard runs on, its own: a Redis stack and a Worker
// (workerd), the endpoints its queues deliver to, and Chromium with one watched page (see
// browser.ts), all started together before the file (beforeAll) and stopped after it. The file
// fills its queues and signs in itself, in a beforeAll of its own, which runs after this one.
import { afterAll, beforeAll } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type Endpoint, type Handler, startEndpoint } from '../helpers/endpoint';
import { type PrivateStack, type RunningWorker, startPrivateStack, startWorker } from '../helpers/worker';
import { expectJson } from '../http/support';
import { type Watch, launchChromium, openPage } from './browser';

export interface DashboardSuite<Name extends string> {
  stack: PrivateStack;
  worker: RunningWorker;
  /** An endpoint per handler given, under the same name. */
  endpoints: Record<Name, Endpoint>;
  browser: Browser;
  /** A desktop-sized page in a context of its own, not signed in yet; `seen` watches it (openPage). */
  context: BrowserContext;
  page: Page;
  seen: Watch;
  /** The JSON of GET `path` with the admin token, which must answer 200. */
  apiJson(path: string): Promise<any>;
}

/**
 * Starts the file's stack, Worker, endpoints (`endpoints`: a handler by name) and Chromium
 * (beforeAll) and stops them (afterAll). `expectedConsole`: the console messages the file's
 * scenarios cause on purpose (see watch). The returned object is filled in once beforeAll has run.
 */
export function useDashboardSuite<Name extends string = never>({
  endpoints = {} as Record<Name, Handler>,
  expectedConsole = [],
}: { endpoints?: Record<Name, Handler>; expectedConsole?: RegExp[] } = {}): DashboardSuite<Name> {
  const suite = {
    apiJson: async (path: string) => expectJson(await suite.worker.api(path), 200),
  } as DashboardSuite<Name>;
  beforeAll(async () => {
    suite.stack = await startPrivateStack();
    const handlers = Object.entries<Handler>(endpoints);
    const [worker, started, browser] = await Promise.all([
      startWorker(suite.stack),
      Promise.all(handlers.map(([, handler]) => startEndpoint(handler))),
      launchChromium(),
    ]);
    suite.worker = worker;
    suite.endpoints = Object.fromEntries(handlers.map(([name], i) => [name, started[i]])) as Record<Name, Endpoint>;
    suite.browser = browser;
    ({ context: suite.context, page: suite.page, seen: suite.seen } = await openPage(browser, [worker.url], expectedConsole));
  });
  afterAll(async () => {
    await suite.browser?.close();
    await Promise.all(Object.values<Endpoint | undefined>(suite.endpoints ?? {}).map((endpoint) => endpoint?.close()));
    await suite.worker?.dispose();
    await suite.stack?.close();
  });
  return suite;
}
