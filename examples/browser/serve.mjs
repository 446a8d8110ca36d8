#!/usr/bin/env node
// Serves the browser example on its own origin: the page (index.html) and groupq's built client
// (dist/client.js, from `npm run build`) as /groupq-client.js. PORT (default 8790; 0 picks a free
// one) and HOST (default 127.0.0.1). Prints `browser example: <url>` once it listens.
import { readFile } from 'node:fs/promises';
import http from 'node:http';

const here = new URL('.', import.meta.url);
const FILES = {
  '/': { file: new URL('index.html', here), type: 'text/html; charset=utf-8' },
  '/index.html': { file: new URL('index.html', here), type: 'text/html; charset=utf-8' },
  '/groupq-client.js': { file: new URL('../../dist/client.js', here), type: 'text/javascript; charset=utf-8' },
};

const port = Number(process.env.PORT ?? 8790);
const host = process.env.HOST ?? '127.0.0.1';

const server = http.createServer(async (req, res) => {
  const { pathname } = new URL(req.url ?? '/', 'http://localhost');
  const entry = FILES[pathname];
  if (req.method !== 'GET' && req.method !== 'HEAD') return res.writeHead(405, { allow: 'GET, HEAD' }).end();
  if (!entry) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  try {
    // Read on every request: edit the page, reload, see it.
    const body = await readFile(entry.file);
    res.writeHead(200, { 'content-type': entry.type, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body);
  } catch (error) {
    const missing = error && error.code === 'ENOENT' && pathname === '/groupq-client.js';
    res.writeHead(500, { 'content-type': 'text/plain' }).end(missing ? 'dist/client.js is missing: run `npm run build` first\n' : 'read failed\n');
  }
});

server.listen(port, host, () => {
  const address = server.address();
  console.log(`browser example: http://${host}:${address.port}/`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
