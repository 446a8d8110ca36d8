// Real Chromium for the browser tests (Debian's chromium, driven by playwright-core): one browser
// per test file, a watcher that records every console error, page error and request to another
// origin (an event stream the page closes is not a failure: the views close theirs when left), and screenshots written under the OS temp dir (and to GROUPQ_SCREENSHOT_DIR when set,
// which is how docs/dashboard.png is made).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, type BrowserContext, type Page, type Request, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    // The network is closed in CI: without the background-networking flags Chromium keeps
    // trying to reach Google's services and floods the log with refused connections.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Watch {
  /** Console errors and warnings, uncaught page errors, failed requests. */
  problems: string[];
  /** Requests that left the allowed origins (data: URLs and about:blank are not requests to anyone). */
  foreign: string[];
}

/** An API event stream (a queue's, a group's, a job's): open as long as its view is. */
export function isEventStream(url: string): boolean {
  return new URL(url).pathname.endsWith('/events');
}

/**
 * How many requests of `page` are not answered yet, counted from now: a test that moves the
 * page's clock waits for none first, or the jump would pass their timeout (an abort). Event
 * streams are left out: they stay open as long as their view does.
 */
export function requestsInFlight(page: Page): () => number {
  let n = 0;
  const counted = (request: Request) => !isEventStream(request.url());
  page.on('request', (request) => counted(request) && n++);
  page.on('requestfinished', (request) => counted(request) && n--);
  page.on('requestfailed', (request) => counted(request) && n--);
  return () => n;
}

/**
 * Records what a context's pages do wrong. `expectedConsole` lists console messages a scenario
 * causes on purpose (Chromium logs every 401 answer as "Failed to load resource").
 */
export function watch(context: BrowserContext, origins: string[], expectedConsole: RegExp[] = []): Watch {
  const result: Watch = { problems: [], foreign: [] };
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol === 'data:' || url.href === 'about:blank') return;
    if (!origins.includes(url.origin)) result.foreign.push(request.url());
  });
  context.on('requestfailed', (request) => {
    const error = request.failure()?.errorText ?? '';
    // A view left, a tab hidden, a page unloaded: the dashboard cut its stream on purpose.
    if (error === 'net::ERR_ABORTED' && isEventStream(request.url())) return;
    result.problems.push(`request failed: ${request.url()} ${error}`);
  });
  context.on('console', (message) => {
    if (message.type() !== 'error' && message.type() !== 'warning') return;
    if (expectedConsole.some((pattern) => pattern.test(message.text()))) return;
    result.problems.push(`console ${message.type()}: ${message.text()} (${message.location().url})`);
  });
  context.on('weberror', (error) => result.problems.push(`page error: ${error.error().message}`));
  return result;
}

/**
 * A screenshot (the whole page, or the viewport with `fullPage: false`) under the OS temp dir
 * (returned), and `<name>.png` in GROUPQ_SCREENSHOT_DIR when that is set.
 */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<string> {
  const file = path.join(os.tmpdir(), `groupq-${name}-${process.pid}.png`);
  const image = await page.screenshot({ path: file, fullPage });
  const dir = process.env.GROUPQ_SCREENSHOT_DIR;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${name}.png`), image);
  }
  return file;
}

/** Polls `read` until `accept` holds (the dashboard refreshes on its own; so does the queue). */
export async function until<T>(read: () => Promise<T>, accept: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Opens the dashboard at `origin` and signs in from the keyboard (the field has focus; Enter submits). */
export async function signInAt(page: Page, origin: string, token: string): Promise<void> {
  await page.goto(`${origin}/dashboard`);
  await page.locator('#token:focus').waitFor();
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
}

/** A desktop-sized page in a context of its own, its console and requests watched (see watch). */
export async function openPage(browser: Browser, origins: string[], expectedConsole: RegExp[] = []) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const seen = watch(context, origins, expectedConsole);
  return { context, seen, page: await context.newPage() };
}

/** signInAt, then waits for the signed-in session bar. */
export async function signedIn(page: Page, origin: string, token: string): Promise<void> {
  await signInAt(page, origin, token);
  await page.locator('#session-bar').waitFor();
}

/** Where the dashboard keeps the admin token: the tab's session storage (src/dashboard/session.ts). */
export const TOKEN_KEY = 'groupq.adminToken';

/**
 * Where a browser test on a shared page starts: a fresh load of the dashboard at `hash`, signed in
 * with `token` as after the sign-in form (the token in the tab's session storage), whatever the
 * test before left on the page (a view, a question, a filter, a signed-out tab). The token is set
 * from a blank page of the same origin, answered by the browser itself: no dashboard script runs
 * there, and the Worker never sees it.
 */
export async function startAt(page: Page, origin: string, token: string, hash = '/'): Promise<void> {
  const blank = `${origin}/__test-start`;
  await page.route(blank, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><link rel="icon" href="data:,">' }));
  try {
    await page.goto(blank);
    await page.evaluate(`sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(token)})`);
  } finally {
    await page.unroute(blank);
  }
  await page.goto(`${origin}/dashboard#${hash}`);
  await page.locator('#session-bar').waitFor();
}

/**
 * Opens a queue's view from the list of queues, the way a user gets there, from a fresh load of
 * the page (signed in already): nothing a test before left on it (a question, a filter, a tab)
 * stays, as it could across a mere change of the URL's hash.
 */
export async function openQueueAt(page: Page, origin: string, name: string): Promise<void> {
  await page.goto('about:blank');
  await page.goto(`${origin}/dashboard#/`);
  await page.locator(`article[data-queue="${name}"] h2 a`).click();
  await page.locator('#queue-view h1', { hasText: name }).waitFor();
}

/** Clicks Refresh and waits for the redraw it announces. */
export async function refreshNow(page: Page): Promise<void> {
  await page.evaluate(`document.getElementById('status').textContent = ''`);
  await page.locator('#refresh').click();
  await page.locator('#status', { hasText: 'Refreshed' }).waitFor();
}
