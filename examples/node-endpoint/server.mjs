// A groupq endpoint on Node 20: node:http turns each request into a Web Request for
// createHandler, which verifies groupq's signature, runs `countWords` and answers with its result
// (groupq stores it as the job's result). Work that outlives groupq's wait (the queue's
// timeoutMs) is answered 202 and finished in the background; on SIGTERM or SIGINT the server
// stops taking jobs and lets the answers in progress and that work finish first.
//   GROUPQ_SIGNING_SECRET=whsec_... PORT=8790 node examples/node-endpoint/server.mjs
import http from 'node:http';
import { createHandler, NonRetryableError } from 'groupq/receiver';

const secret = process.env.GROUPQ_SIGNING_SECRET;
if (!secret) {
  console.error('set GROUPQ_SIGNING_SECRET to the whsec_... secret groupq signs with');
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8790);
/** groupq sends a job's data (at most 1 MiB, a queue's maxPayloadBytes) inside a small envelope. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** The job: count the words of `data.text`. */
async function countWords(job) {
  if (typeof job.data?.text !== 'string') {
    // Retrying cannot fix the data: fail the job now.
    throw new NonRetryableError('data.text must be a string');
  }
  const words = job.data.text.split(/\s+/).filter(Boolean);
  return { words: words.length, attempt: job.attempt };
}

/** Work still running after its 202, so a shutdown can wait for it. */
const background = new Set();
const handle = createHandler(countWords, {
  secret,
  nextSecret: process.env.GROUPQ_SIGNING_SECRET_NEXT || undefined,
  // The kit reads 1 MiB by default: room for the largest data a queue allows, and its envelope.
  maxBodyBytes: MAX_BODY_BYTES,
  waitUntil(promise) {
    background.add(promise);
    promise.finally(() => background.delete(promise));
  },
});

/** The node request as a Web Request, or null when its body is too large. */
async function toRequest(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return null;
    chunks.push(chunk);
  }
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
  return new Request(new URL(req.url, `http://${req.headers.host ?? 'localhost'}`), { method: req.method, headers, body });
}

const server = http.createServer(async (req, res) => {
  try {
    const request = await toRequest(req);
    if (!request) return res.writeHead(413).end('too large\n');
    if (request.method !== 'POST') return res.writeHead(405, { allow: 'POST' }).end('groupq endpoint: POST jobs here\n');
    const response = await handle(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
    console.log(`${response.status} job ${request.headers.get('groupq-job-id')} attempt ${request.headers.get('groupq-attempt')}`);
  } catch (error) {
    console.error(error);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  }
});

server.listen(port, process.env.HOST, () => {
  console.log(`groupq endpoint listening on http://${process.env.HOST ?? 'localhost'}:${server.address().port}/`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, async () => {
    // Answers still being worked out finish too: cut off, each would cost its job an attempt.
    const closed = new Promise((resolve) => server.close(resolve));
    await Promise.allSettled([closed, ...background]);
    process.exit(0);
  });
}
