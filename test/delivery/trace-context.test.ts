// W3C trace context end to end through the Worker in workerd (docs/tracing.md): the producer's
// `traceparent` and `tracestate` enqueue headers reach the endpoint unchanged on every delivery
// attempt (a retry too) and the outcome callback; a job enqueued without them is delivered
// without; a traceparent that is not valid is ignored (the job is still taken), a tracestate
// that is not valid is dropped alone; a batch's headers go to each of its jobs; browsers with a
// publish token may send them (CORS). The OpenTelemetry SDK on both ends: opentelemetry.test.ts.
import { describe, expect, it } from 'vitest';
import { useEndpointPerTest } from '../helpers/endpoint';
import { getJob, jobInState, putQueue, queueName, quickRetries, useWorker } from './support';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE';

const env = useWorker();
const server = useEndpointPerTest();

/** POSTs to an enqueue route with the given headers; answers the body after checking the status. */
async function post(path: string, body: unknown, headers: Record<string, string>, status = 201): Promise<any> {
  const res = await env.worker.api(path, { method: 'POST', json: body, headers });
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text);
}

/** The trace headers of a request as received (undefined when absent). */
const traceOf = (headers: Record<string, string | string[] | undefined>) => ({
  traceparent: headers.traceparent,
  tracestate: headers.tracestate,
});

describe('trace context', () => {
  it('reaches every delivery attempt, a retry too, and the outcome callback, unchanged', async () => {
    const callback = await server(() => ({ status: 204 }));
    const endpoint = await server((r) => (r.job.attempt < 2 ? { status: 500, body: 'not yet' } : { status: 200 }));
    const q = queueName('trace');
    await putQueue(env.worker, q, { endpoint: endpoint.url, maxAttempts: 3, backoff: quickRetries, keepCompleted: 10, callbackUrl: callback.url });
    const { id } = await post(`/v1/queues/${q}/jobs`, { group: 'g', data: 1 }, { traceparent: TRACEPARENT, tracestate: TRACESTATE });

    await jobInState(env.worker, q, id, 'completed', { pump: env.worker });
    expect(endpoint.received.map((r) => r.headers['groupq-attempt'])).toEqual(['1', '2']);
    for (const r of endpoint.received) expect(traceOf(r.headers)).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });

    const [outcome] = await callback.waitFor(1);
    expect(outcome!.headers['groupq-outcome']).toBe('completed');
    expect(traceOf(outcome!.headers)).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
    expect(await getJob(env.worker, q, id)).toMatchObject({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
  });

  it('a job enqueued without them is delivered, and its outcome sent, without them', async () => {
    const callback = await server(() => ({ status: 204 }));
    const endpoint = await server();
    const q = queueName('trace-none');
    await putQueue(env.worker, q, { endpoint: endpoint.url, keepCompleted: 10, callbackUrl: callback.url });
    const { id } = await post(`/v1/queues/${q}/jobs`, { group: 'g' }, {});
    const [delivery] = await endpoint.waitFor(1);
    const [outcome] = await callback.waitFor(1);
    expect(traceOf(delivery!.headers)).toEqual({ traceparent: undefined, tracestate: undefined });
    expect(traceOf(outcome!.headers)).toEqual({ traceparent: undefined, tracestate: undefined });
    expect(await getJob(env.worker, q, id)).not.toHaveProperty('traceparent');
  });

  it('a traceparent that is not valid is ignored, its tracestate with it; the job is taken all the same', async () => {
    const endpoint = await server();
    const q = queueName('trace-bad');
    await putQueue(env.worker, q, { endpoint: endpoint.url, keepCompleted: 10 });
    const invalid = [
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01', // upper case
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01', // all-zero trace-id
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', // all-zero parent-id
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', // version ff
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra', // version 00 is 55 characters
      `${TRACEPARENT}, ${TRACEPARENT}`, // two traceparent headers
    ];
    for (const traceparent of invalid) {
      const { id } = await post(`/v1/queues/${q}/jobs`, { group: 'g' }, { traceparent, tracestate: TRACESTATE });
      const job = await jobInState(env.worker, q, id, 'completed');
      expect(job, traceparent).not.toHaveProperty('traceparent');
      expect(job).not.toHaveProperty('tracestate');
    }
    for (const r of endpoint.received) expect(traceOf(r.headers)).toEqual({ traceparent: undefined, tracestate: undefined });
  });

  it('a tracestate that is not valid is dropped; its valid traceparent is kept', async () => {
    const endpoint = await server();
    const q = queueName('trace-state');
    await putQueue(env.worker, q, { endpoint: endpoint.url, keepCompleted: 10 });
    const tooMany = Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',');
    for (const tracestate of ['Rojo=1', 'rojo=1,rojo=2', 'rojo', tooMany]) {
      const { id } = await post(`/v1/queues/${q}/jobs`, { group: 'g' }, { traceparent: TRACEPARENT, tracestate });
      const job = await jobInState(env.worker, q, id, 'completed');
      expect(job, tracestate).toMatchObject({ traceparent: TRACEPARENT });
      expect(job, tracestate).not.toHaveProperty('tracestate');
    }
    expect(endpoint.received.map((r) => traceOf(r.headers))).toEqual(Array(4).fill({ traceparent: TRACEPARENT, tracestate: undefined }));
  });

  it("a later version is kept as the version 00 it downgrades to, and an over-long tracestate loses whole members from its end", async () => {
    const endpoint = await server();
    const q = queueName('trace-later');
    await putQueue(env.worker, q, { endpoint: endpoint.url, keepCompleted: 10 });
    const members = Array.from({ length: 10 }, (_, i) => `vendor${i}=${String(i).repeat(60)}`); // 10 x 69 characters
    const { id } = await post(
      `/v1/queues/${q}/jobs`,
      { group: 'g' },
      { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-future', tracestate: members.join(', ') },
    );
    const [r] = await endpoint.waitFor(1);
    const kept = members.slice(0, 7).join(','); // 7 x 69 + 6 commas = 489 <= 512
    expect(traceOf(r!.headers)).toEqual({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: kept });
    expect(await getJob(env.worker, q, id)).toMatchObject({ tracestate: kept });
  });

  it("a batch's headers go to each of its jobs", async () => {
    const endpoint = await server();
    const q = queueName('trace-batch');
    await putQueue(env.worker, q, { endpoint: endpoint.url, concurrency: 3, keepCompleted: 10 });
    const { jobs } = await post(`/v1/queues/${q}/jobs/batch`, { jobs: [{ group: 'a' }, { group: 'b' }, { group: 'c' }] }, {
      traceparent: TRACEPARENT,
      tracestate: TRACESTATE,
    });
    const received = await endpoint.waitFor(3);
    expect(received.map((r) => r.job.id).sort()).toEqual(jobs.map((job: { id: string }) => job.id).sort());
    for (const r of received) expect(traceOf(r.headers)).toEqual({ traceparent: TRACEPARENT, tracestate: TRACESTATE });
  });

  it("a browser with a publish token may send them: the preflight of the queue's allowed origins allows both", async () => {
    const q = queueName('trace-cors');
    await putQueue(env.worker, q, { endpoint: 'http://127.0.0.1:9/jobs', allowedOrigins: ['https://app.example'] });
    for (const route of ['jobs', 'jobs/batch']) {
      const res = await fetch(`${env.worker.url}/v1/queues/${q}/${route}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'traceparent, tracestate' },
      });
      expect(res.status).toBe(204);
      const allowed = (res.headers.get('access-control-allow-headers') ?? '').split(',').map((name) => name.trim().toLowerCase());
      expect(allowed).toEqual(expect.arrayContaining(['traceparent', 'tracestate']));
    }
  });
});
