// The Node server's ASSETS binding: the files of public/ (the dashboard, the API reference) as
// Workers static assets serves them, with the headers public/_headers gives each path (the
// dashboard's strict CSP among them). The files are read by @hono/node-server's serveStatic;
// what is written here is what a Worker's asset worker does besides: the _headers rules and
// `html_handling = "auto-trailing-slash"` (a folder's index.html at its URL with a slash, a page's
// .html at its URL without one, and a request for the .html itself sent there).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
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

export interface Assets {
  /** ASSETS, as the app reads it: a Fetcher over the files of the folder, with its _headers applied. */
  fetcher: Fetcher;
  /** Whether `path` names one of its files (or a page by its name without .html): served before the app, as Workers does. */
  has(path: string): boolean;
}

/**
 * The files of `root`, listed once: they are the build's (a deploy, or npm run dev's reload,
 * starts a new server), and a request's check is then a set lookup, no file system call.
 */
export function createAssets(root: string): Assets {
  const files = new Set(
    existsSync(root)
      ? readdirSync(root, { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) => `/${relative(root, join(entry.parentPath, entry.name)).split(sep).join('/')}`)
      : [],
  );
  // _headers is the server's, never served (as the asset worker keeps it).
  files.delete('/_headers');
  const headersFile = join(root, '_headers');
  const rules = existsSync(headersFile) ? parseHeaders(readFileSync(headersFile, 'utf8')) : [];
  /** The file `path` names: itself, or the page of that name. */
  const fileOf = (path: string): string | null => (files.has(path) ? path : !path.endsWith('/') && files.has(`${path}.html`) ? `${path}.html` : null);
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
  // A page asked for by its file's name goes to its URL, as auto-trailing-slash does: there its
  // _headers rule (its CSP) applies.
  app.use('*', async (c, next) => {
    const path = c.req.path;
    if (!path.endsWith('.html') || !files.has(path)) return next();
    const url = new URL(c.req.url);
    url.pathname = path.endsWith('/index.html') ? path.slice(0, -'index.html'.length) : path.slice(0, -'.html'.length);
    return c.redirect(url.href, 307);
  });
  app.use('*', serveStatic({ root, rewriteRequestPath: (path) => fileOf(path) ?? (path.endsWith('/') ? path : '/.none') }));
  app.notFound((c) => c.text('not found', 404));
  const fetcher = {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => app.fetch(new Request(input, init)),
    connect: () => {
      throw new Error('ASSETS.connect is not available on the Node server');
    },
  } as unknown as Fetcher;
  return {
    fetcher,
    has(path) {
      try {
        return fileOf(decodeURIComponent(path)) !== null;
      } catch {
        return false; // not a path any file has (a stray %): the app answers it
      }
    },
  };
}
