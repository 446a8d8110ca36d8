// createHandler's lease at its edges, against the real Worker. A host whose clock runs ahead of
// groupq's by more than the job's timeoutMs (inside the 300 s tolerance): heartbeats are timed
// on the receiver's own clock (send time plus the extension), so they keep a third-of-the-lease
// pace instead of reading every lease as over and going out every 100 ms (each a Redis script
// call) while the job runs. ctx.progress sent without await and refused by groupq: no unhandled
// rejection, which would end a Node process and every job it was running.
import { afterEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../src/receiver/index';
import { SIGNING_SECRET } from '../helpers/worker';
import { enqueue, jobInState, putQueue, queueName, quickRetries, sleep, useWorker } from '../delivery/support';
import { type Server, serve, watchedFetch } from './support';

describe('createHandler, lease edges', () => {
  const env = useWorker();
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function queueTo(server: Server, config: Record<string, unknown> = {}): Promise<string> {
    servers.push(server);
    const queue = queueName('lease-edges');
    await putQueue(env.worker, queue, { endpoint: server.url, keepCompleted: 10, backoff: quickRetries, ...config });
    return queue;
  }

  it('heartbeats at about a third of the lease with a clock 10 s ahead, as with a right clock', async () => {
    const watched = watchedFetch();
    const background: Promise<unknown>[] = [];
    const slowJob = async () => {
      await sleep(3_000);
      return 'ok';
    };
    const server = await serve(
      createHandler(slowJob, {
        secret: SIGNING_SECRET,
        async: true,
        now: () => Date.now() + 10_000,
        fetch: watched.fetch,
        waitUntil: (p) => background.push(p),
      }),
    );
    const queue = await queueTo(server, { timeoutMs: 3_000 });
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    expect(await jobInState(env.worker, queue, id, 'completed', { pump: env.worker })).toMatchObject({ attempts: 1, result: 'ok' });
    await Promise.all(background);
    // A 3 s job under 3 s extensions, heartbeated at a third: a handful (3 here; 28 when the
    // skewed clock made every lease look over). Not one per 100 ms.
    const heartbeats = watched.calls.filter((c) => c.kind === 'heartbeat');
    expect(heartbeats.length).toBeLessThan(8);
    expect(heartbeats.every((c) => c.status === 200)).toBe(true);
  });

  it('a progress sent without await and refused by groupq is no unhandled rejection; the job completes', async () => {
    const server = await serve(
      createHandler(
        async (_job, ctx) => {
          void ctx.progress(500); // out of 0-100: groupq answers 400
          await sleep(300);
          return 'ok';
        },
        { secret: SIGNING_SECRET },
      ),
    );
    const queue = await queueTo(server);
    const { id } = await enqueue(env.worker, queue, { group: 'g' });
    // vitest fails the run on an unhandled rejection, as Node 20 ends the process on one.
    expect(await jobInState(env.worker, queue, id, 'completed')).toMatchObject({ attempts: 1, result: 'ok' });
  });
});
