// The rendered API reference (public/reference.html, built by scripts/build-openapi.mjs with
// Redocly CLI): up to date with the document, loading nothing from the network, served by the
// Worker's static assets at /reference with its CSP, and readable in a real browser with no
// request leaving the Worker's origin and no console error (a CSP violation is one).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteLoads } from '../../scripts/build-openapi.mjs';
import { launchChromium, openPage } from '../dashboard/browser';
import { useHttpSuite } from '../http/support';

const suite = useHttpSuite();
let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('public/reference.html', () => {
  it('is up to date with the document (npm run build:openapi --check)', () => {
    const out = execFileSync(process.execPath, ['scripts/build-openapi.mjs', '--check'], { encoding: 'utf8' });
    expect(out).toMatch(/API reference page up to date/);
  });

  it('loads no script, style, image or font from another origin', () => {
    const html = readFileSync('public/reference.html', 'utf8');
    expect(remoteLoads(html)).toEqual([]);
    expect(html).not.toMatch(/<script[^>]*\ssrc=/i);
    expect(html).not.toMatch(/<link[^>]*rel=["']?stylesheet/i);
  });

  it('is served at /reference, with its CSP, and renders offline in Chromium', async () => {
    const res = await fetch(`${suite.worker.url}/reference`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');

    const { context, seen, page } = await openPage(browser, [suite.worker.url]);
    try {
      await page.goto(`${suite.worker.url}/reference`);
      // The overview (the error codes' table), then one section, as a reader opens it.
      const rendered = page.getByText('QUEUE_NOT_FOUND').first().waitFor({ timeout: 15_000 });
      // What went wrong, if the page never renders (a CSP violation is a console error).
      await rendered.catch((error: Error) => {
        throw new Error(`${error.message}\n${[...seen.problems, ...seen.foreign].join('\n')}`);
      });
      // Search runs in the page: it finds the repeat routes by their summaries.
      await page.getByText('Search', { exact: false }).first().click();
      await page.locator('input:focus').fill('repeatable');
      await page.getByText('/v1/queues/{queue}/repeats/{key}').first().waitFor();
      await page.keyboard.press('Escape');
      await page.getByText('Enqueue', { exact: true }).first().click();
      await page.getByText('Enqueue a job').first().waitFor();
      expect(seen.foreign).toEqual([]);
      expect(seen.problems).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
