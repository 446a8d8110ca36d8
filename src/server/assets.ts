// The Node server's ASSETS binding: the files of public/ (the dashboard, the API reference) as
// Workers static assets serves them, with the headers public/_headers gives each path (the
// dashboard's strict CSP among them). The files are read by @hono/node-server's serveStatic;
// what is written here is what a Worker's asset worker does besides: the _headers rules and
// `html_handling = "auto-trailing-slash"` (a folder's index.html at its URL with a slash, a page's
// .html at its URL without one).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';

interface Rule {
  /** A path, or a prefix when it ended in `*` (the only splat public/_headers uses). */
  path: string;
  prefix: boolean;
  headers: [string, string][];
}

/** public/_headers' rules: an unindented line is a path, the indented `Name: value` lines under it its headers. */
export function parseHeaders(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      const prefix = line.endsWith('*');
      rules.push({ path: prefix ? line.trim().slice(0, -1) : line.trim(), prefix, headers: [] });
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0 && rules.length > 0) rules.at(-1)!.headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return rules;
}

/** A Fetcher over the files of `root`, with its _headers applied. */
export function createAssets(root: string): Fetcher {
  const headersFile = join(root, '_headers');
  const rules = existsSync(headersFile) ? parseHeaders(readFileSync(headersFile, 'utf8')) : [];
  const file = (path: string) => {
    const full = join(root, path);
    return existsSync(full) && statSync(full).isFile();
  };
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    const path = c.req.path;
    if (c.res.status >= 400) return;
    for (const rule of rules) {
      if (rule.prefix ? path.startsWith(rule.path) : path === rule.path) {
        for (const [name, value] of rule.headers) c.res.headers.set(name, value);
      }
    }
  });
  app.use(
    '*',
    serveStatic({
      root,
      // _headers is the server's, never served (as the asset worker keeps it).
      rewriteRequestPath: (path) => (path === '/_headers' ? '/.none' : !path.endsWith('/') && !file(path) && file(`${path}.html`) ? `${path}.html` : path),
    }),
  );
  app.notFound((c) => c.text('not found', 404));
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init)),
    connect: () => {
      throw new Error('ASSETS.connect is not available on the Node server');
    },
  } as unknown as Fetcher;
}

/** Whether `path` names a file under `root` (or a page by its name without .html): served before the app, as Workers does. */
export function isAsset(root: string, path: string): boolean {
  if (path === '/_headers' || path.includes('..')) return false;
  let full: string;
  try {
    full = join(root, decodeURIComponent(path));
  } catch {
    return false; // not a path any file has (a stray %): the app answers it
  }
  const found = (p: string) => existsSync(p) && statSync(p).isFile();
  return found(full) || (!path.endsWith('/') && found(`${full}.html`));
}
