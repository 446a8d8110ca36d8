// The events of real jobs reach their queue's stream: scripts report them while the queue's meta
// wants them (opening a stream says so), and the Worker that ran each script hands them to the
// queue's hub. A job delivered to a real endpoint, one retried, and one cancelled, read over SSE.
import { afterAll, describe, expect, it } from 'vitest';
import { streamEventSchema } from '../../src/protocol/events';
import { useEndpoints } from '../helpers/endpoint';
import { type SseReader, openSse } from '../helpers/sse-reader';
import { ADMIN_TOKEN } from '../helpers/worker';
import { enqueue, putQueue, uniqueQueue, useHttpSuite } from '../http/support';

const suite = useHttpSuite();
const endpoints = useEndpoints({
  done: () => ({ status: 200, json: { ok: 1 } }),
  failOnce: ({ job }) => (job.attempt === 1 ? { status: 500, body: 'first try fails' } : { status: 200 }),
});
const readers: SseReader[] = [];
afterAll(() => readers.forEach((reader) => reader.close()));

async function queueStream(queue: string): Promise<SseReader> {
  const reader = await openSse(`${suite.worker.url}/v1/queues/${queue}/events`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  readers.push(reader);
  expect(reader.res.status).toBe(200);
  return reader;
}

const kinds = (reader: SseReader, id: string) =>
  reader.events.map((e) => streamEventSchema.parse({ event: e.type, eventId: e.lastEventId, data: JSON.parse(e.data) })).filter((e) => e.data.id === id);

describe('events of real jobs', () => {
  it('a delivered job: added, active, completed, in order, with its result', async () => {
    const queue = uniqueQueue('fwd');
    await putQueue(suite.worker, queue, { endpoint: endpoints.done.url });
    const reader = await queueStream(queue);
    const { id } = await enqueue(suite.worker, queue, { group: 'g', data: 1 });
    await reader.waitForEvents(3);
    const events = kinds(reader, id);
    expect(events.map((e) => e.event)).toEqual(['added', 'active', 'completed']);
    expect(events.map((e) => ('attempt' in e.data ? e.data.attempt : null))).toEqual([0, 1, 1]);
    expect(events.every((e) => e.data.queue === queue && e.data.group === 'g')).toBe(true);
  });

  it('a job that fails once: added, active, retrying, active, completed', async () => {
    const queue = uniqueQueue('fwd');
    await putQueue(suite.worker, queue, { endpoint: endpoints.failOnce.url, backoff: { type: 'fixed', delayMs: 0 } });
    const reader = await queueStream(queue);
    const { id } = await enqueue(suite.worker, queue, { group: 'g', data: 1 });
    // The retry is due at once; the next drain or tick delivers it.
    for (let i = 0; i < 50 && kinds(reader, id).length < 5; i++) {
      await suite.worker.scheduled();
    }
    expect(kinds(reader, id).map((e) => e.event)).toEqual(['added', 'active', 'retrying', 'active', 'completed']);
  });
});
