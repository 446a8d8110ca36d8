// Run by each tested Node binary (test/node-versions/kit.test.ts), as a user's backend would run
// the kit: `groupq/client` and `groupq/receiver` resolved by name to dist/, an endpoint on
// node:http on loopback built with createHandler, a queue that pushes to it, and jobs enqueued,
// awaited and read back through the client. Prints one JSON line of what it saw, then exits.
//   GROUPQ_URL=... GROUPQ_TOKEN=... GROUPQ_SIGNING_SECRET=whsec_... QUEUE=... node kit-run.mjs
import http from 'node:http';
import { GroupqClient, GroupqError } from 'groupq/client';
import { createHandler, NonRetryableError } from 'groupq/receiver';

const { GROUPQ_URL: url, GROUPQ_TOKEN: token, GROUPQ_SIGNING_SECRET: secret, QUEUE: queueName } = process.env;

/** Groups in the order their jobs reached the endpoint, to show FIFO within a group. */
const arrived = [];
const handle = createHandler(
  async (job, ctx) => {
    arrived.push(`${job.group}:${job.data.n}`);
    if (job.data.bad) throw new NonRetryableError('bad data');
    await ctx.progress(50);
    return { n: job.data.n, node: process.version };
  },
  { secret },
);

const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const answer = await handle(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: Buffer.concat(chunks) }));
  res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${server.address().port}/jobs`;

try {
  const client = new GroupqClient({ url, token });
  const queue = client.queue(queueName);
  await queue.configure({ endpoint, keepCompleted: 10, keepFailed: 10, maxAttempts: 3 });
  const single = await queue.addAndWait({ group: 'a', data: { n: 1 } });
  const batch = await queue.addBatch([
    { group: 'b', data: { n: 2 } },
    { group: 'b', data: { n: 3 } },
    { group: 'b', data: { n: 4, bad: true } },
  ]);
  const ended = [];
  for (const { id } of batch) ended.push(await queue.waitForJob(id, { timeoutMs: 30_000 }));
  // A known id writes nothing, so a retried add is safe.
  const again = await queue.add({ group: 'b', id: batch[0].id, data: { n: 2 } });
  let missing = null;
  try {
    await queue.getJob('no-such-job');
  } catch (error) {
    if (!(error instanceof GroupqError)) throw error;
    missing = { status: error.status, code: error.code };
  }
  const pick = ({ id, state, attempts, result, error, progress }) => ({ id, state, attempts, result, error, progress });
  console.log(JSON.stringify({ node: process.version, single: pick(single), batch: ended.map(pick), again, missing, arrived }));
} finally {
  server.close();
}
