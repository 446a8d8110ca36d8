// HTTP API v1, names inside URLs over HTTP against the Worker in workerd: groups may hold '/',
// spaces, '%' and any printable UTF-8, job ids any visible ASCII; percent-encoded the way
// encodeURIComponent does, they must round-trip through the routes exactly once-decoded
// ('%41' stays '%41', '/' does not split the path).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, expectError, expectJson, pausedQueue, putQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const suite = useHttpSuite();
let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint();
});
afterAll(async () => {
  await endpoint?.close();
});

const GROUPS = ['tenant/42 ü', '100% sure?#&=+', 'literal %41 and %2F', 'ракета 🚀 / ∑', ' padded '];
const IDS = ['order:42/a%b', 'a?b#c&d=e+f', '%41%2F', "~!*()'@$,;[]{}|^`\\\"<>", 'x/../y', '..hidden'];

const at = (queue: string, ...parts: string[]) => `/v1/queues/${queue}/${parts.map(encodeURIComponent).join('/')}`;

describe('groups in URLs', () => {
  it('GET group, pause and resume round-trip groups with "/", spaces, "%" and non-ASCII', async () => {
    const queue = uniqueQueue('groupnames');
    await pausedQueue(suite.worker, queue);
    for (const group of GROUPS) await enqueue(suite.worker, queue, { id: `job-of-${GROUPS.indexOf(group)}`, group });

    for (const group of GROUPS) {
      const one = await expectJson(await suite.worker.api(`/v1/queues/${queue}/groups/${encodeURIComponent(group)}`), 200);
      expect(one.group).toBe(group);
      expect(one.jobs.map((j: { id: string; group: string }) => [j.id, j.group])).toEqual([[`job-of-${GROUPS.indexOf(group)}`, group]]);

      const paused = await suite.worker.api(`/v1/queues/${queue}/groups/${encodeURIComponent(group)}/pause`, { method: 'POST' });
      expect(await expectJson(paused, 200)).toEqual({ group, state: 'paused' });
      const resumed = await suite.worker.api(`/v1/queues/${queue}/groups/${encodeURIComponent(group)}/resume`, { method: 'POST' });
      expect(await expectJson(resumed, 200)).toEqual({ group, state: 'ready' });
    }
    // Only the groups that exist: nothing was created under a half-decoded name.
    const listed = await expectJson(await suite.worker.api(`/v1/queues/${queue}/groups`), 200);
    expect(listed.groups.map((g: { group: string }) => g.group).sort()).toEqual([...GROUPS].sort());
    // '%41' was not decoded twice into 'A'.
    await expectError(await suite.worker.api(`/v1/queues/${queue}/groups/${encodeURIComponent('literal A and /')}`), 404, 'GROUP_NOT_FOUND');
  });

  it('the list filter ?group= takes the same names', async () => {
    const queue = uniqueQueue('groupfilter');
    await pausedQueue(suite.worker, queue);
    for (const group of GROUPS) await enqueue(suite.worker, queue, { group, data: group });
    for (const group of GROUPS) {
      const query = new URLSearchParams({ group });
      const body = await expectJson(await suite.worker.api(`/v1/queues/${queue}/jobs?${query}`), 200);
      expect(body.jobs.map((j: { data: string }) => j.data)).toEqual([group]);
    }
  });

  it('a delivery names its group percent-encoded in groupq-group, its id in groupq-job-id', async () => {
    const queue = uniqueQueue('groupheader');
    await putQueue(suite.worker, queue, { endpoint: endpoint.url });
    const group = GROUPS[0]!;
    const id = IDS[0]!;
    await enqueue(suite.worker, queue, { id, group });
    const received = await endpoint.waitFor(1);
    const delivery = received.find((r) => r.job.id === id)!;
    expect(delivery.headers['groupq-group']).toBe(encodeURIComponent(group));
    expect(delivery.headers['groupq-job-id']).toBe(id);
    expect(delivery.job.group).toBe(group);
    expect(delivery.job.callbacks.complete).toContain(`/jobs/${encodeURIComponent(id)}/complete`);
  });
});

describe('job ids in URLs', () => {
  it('GET and DELETE round-trip ids with ":", "/", "%", "?", "#" and other visible ASCII', async () => {
    const queue = uniqueQueue('idnames');
    await pausedQueue(suite.worker, queue);
    for (const id of IDS) expect((await enqueue(suite.worker, queue, { id, group: 'g', data: id })).id).toBe(id);

    for (const id of IDS) {
      const shown = await expectJson(await suite.worker.api(at(queue, 'jobs', id)), 200);
      expect([shown.id, shown.data]).toEqual([id, id]);
    }
    // '%41%2F' is that literal id, not 'A/' (no second decoding).
    await expectError(await suite.worker.api(at(queue, 'jobs', 'A/')), 404, 'JOB_NOT_FOUND');

    for (const id of IDS) {
      const res = await suite.worker.api(at(queue, 'jobs', id), { method: 'DELETE' });
      expect({ id, status: res.status }).toEqual({ id, status: 204 });
      await expectError(await suite.worker.api(at(queue, 'jobs', id)), 404, 'JOB_NOT_FOUND');
    }
    expect((await expectJson(await suite.worker.api(`/v1/queues/${queue}`), 200)).counts.waiting).toBe(0);
  });

  it('PATCH, promote and retry reach the same ids', async () => {
    const queue = uniqueQueue('idops');
    await pausedQueue(suite.worker, queue);
    const id = IDS[1]!;
    await enqueue(suite.worker, queue, { id, group: 'g', delayMs: 600_000 });
    const patched = await suite.worker.api(at(queue, 'jobs', id), { method: 'PATCH', json: { data: 'patched' } });
    expect(await expectJson(patched, 200)).toMatchObject({ id, data: 'patched', state: 'delayed' });
    const promoted = await suite.worker.api(`${at(queue, 'jobs', id)}/promote`, { method: 'POST' });
    expect(await expectJson(promoted, 200)).toMatchObject({ id, state: 'waiting' });
    await expectError(await suite.worker.api(`${at(queue, 'jobs', id)}/retry`, { method: 'POST' }), 409, 'INVALID_STATE');
  });

  it('lease callbacks reach a job with such an id', async () => {
    const queue = uniqueQueue('idcallback');
    const accepting = await startEndpoint(() => ({ status: 202 }));
    try {
      await putQueue(suite.worker, queue, { endpoint: accepting.url, keepCompleted: 10 });
      const id = IDS[0]!;
      await enqueue(suite.worker, queue, { id, group: GROUPS[0]! });
      const [delivery] = await accepting.waitFor(1);
      const res = await fetch(delivery!.job.callbacks.complete, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ lease: delivery!.job.lease.token }),
      });
      expect(await expectJson(res, 200)).toEqual({ state: 'completed' });
      expect((await waitForState(suite.worker, queue, id, 'completed')).id).toBe(id);
    } finally {
      await accepting.close();
    }
  });
});
