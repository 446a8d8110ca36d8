// A job's data reaches the endpoint as the exact text the producer sent, in single and batch
// enqueues: no JSON round trip that rounds big integers, rewrites number formats, reorders
// integer-like keys or drops whitespace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { putQueue, queueName, useWorker } from './support';

describe('job data as sent', () => {
  const env = useWorker();
  let endpoint: Endpoint;
  beforeAll(async () => {
    endpoint = await startEndpoint();
  });
  afterAll(() => endpoint.close());

  const samples = [
    '{"n":12345678901234567891}',
    '[1.0, 1e3, -0.50]',
    '{"2":"b","1":"a"}',
    '{ "nested" : { "list" : [ true , null ] } }',
    '"caf\\u00e9 \\"quoted\\" {not: an object}"',
  ];

  it('a batch keeps every job\'s data byte for byte, and a job without data gets null', async () => {
    const queue = queueName('raw-batch');
    await putQueue(env.worker, queue, { endpoint: endpoint.url });
    const jobs = samples.map((data, i) => `{"group":"g${i}","id":"j${i}","data":${data}}`);
    // Escaped member names are still `data`; the last of two `data` members wins, as in JSON.parse.
    jobs.push('{"group":"gx","id":"jx","d\\u0061ta":{"k":1}}', '{"group":"gy","id":"jy","data":1,"data":{"last":2}}');
    jobs.push('{"group":"gz","id":"jz"}');
    const res = await env.worker.api(`/v1/queues/${queue}/jobs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{ "jobs" : [ ${jobs.join(' ,\n ')} ] }`,
    });
    expect(res.status).toBe(201);
    await endpoint.waitFor(jobs.length);
    const bodyOf = (id: string) => endpoint.received.find((r) => r.job.id === id && r.job.queue === queue)!.rawBody;
    samples.forEach((data, i) => expect(bodyOf(`j${i}`)).toContain(`"data":${data},`));
    expect(bodyOf('jx')).toContain('"data":{"k":1},');
    expect(bodyOf('jy')).toContain('"data":{"last":2},');
    expect(bodyOf('jz')).toContain('"data":null,');
  });

  it('a single enqueue keeps its data byte for byte', async () => {
    const queue = queueName('raw-one');
    await putQueue(env.worker, queue, { endpoint: endpoint.url });
    for (const [i, data] of samples.entries()) {
      const res = await env.worker.api(`/v1/queues/${queue}/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"data" : ${data}, "id":"s${i}", "group":"g"}`,
      });
      expect(res.status).toBe(201);
    }
    await endpoint.waitFor(samples.length + 8);
    samples.forEach((data, i) =>
      expect(endpoint.received.find((r) => r.job.id === `s${i}` && r.job.queue === queue)!.rawBody).toContain(`"data":${data},`),
    );
  });
});
