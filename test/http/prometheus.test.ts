// GET /metrics over HTTP against the Worker in workerd: jobs delivered to a real endpoint that
// completes some and fails others for good show up as counters and histograms, in a document
// Prometheus' own promtool accepts; the admin token and GROUPQ_METRICS_TOKEN open it, and the
// metrics token opens nothing else.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, startEndpoint } from '../helpers/endpoint';
import { enqueue, expectError, putQueue, uniqueQueue, useHttpSuite, waitForState } from './support';

const METRICS_TOKEN = 'test-metrics-token-0123456789';
const suite = useHttpSuite({ GROUPQ_METRICS_TOKEN: METRICS_TOKEN });
let endpoint: Endpoint;
beforeAll(async () => {
  endpoint = await startEndpoint(({ job }) => {
    const answer = (job.data as { answer: string }).answer;
    if (answer === 'ok') return { status: 200 };
    return { status: 422, headers: { 'groupq-retry': 'false' }, body: 'bad input' };
  });
});
afterAll(async () => {
  await endpoint?.close();
});

const scrape = (token = METRICS_TOKEN) => suite.worker.api('/metrics', { headers: { authorization: `Bearer ${token}` } });

/** promtool's verdict on a document: its exit code and what it printed. */
function promtool(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** The samples of a document: `name{labels}` -> value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

describe('GET /metrics', () => {
  it("counts what the endpoint answered; promtool accepts the document", async () => {
    const queue = uniqueQueue('prom');
    await putQueue(suite.worker, queue, { endpoint: endpoint.url, keepCompleted: 100, keepFailed: 100 });
    const ids: [string, string][] = [];
    for (let i = 0; i < 5; i++) ids.push([(await enqueue(suite.worker, queue, { group: `ok${i}`, data: { answer: 'ok' } })).id, 'completed']);
    for (let i = 0; i < 3; i++) ids.push([(await enqueue(suite.worker, queue, { group: `bad${i}`, data: { answer: 'bad' } })).id, 'failed']);
    for (const [id, state] of ids) await waitForState(suite.worker, queue, id, state);

    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    const verdict = promtool(text);
    expect(verdict.output).toBe('');
    expect(verdict.status).toBe(0);

    const at = samples(text);
    const labels = `queue="${queue}",partition="0"`;
    expect(at.get(`groupq_jobs_added_total{${labels}}`)).toBe(8);
    expect(at.get(`groupq_jobs_completed_total{${labels}}`)).toBe(5);
    expect(at.get(`groupq_jobs_failed_total{${labels}}`)).toBe(3);
    expect(at.get(`groupq_attempts_retried_total{${labels}}`)).toBe(0);
    expect(at.get(`groupq_jobs{${labels},state="waiting"}`)).toBe(0);
    expect(at.get(`groupq_jobs{${labels},state="active"}`)).toBe(0);
    // Every attempt started and ended once: 8 waits and 8 runs, under an hour each.
    for (const histogram of ['groupq_wait_seconds', 'groupq_run_seconds']) {
      expect(at.get(`${histogram}_count{${labels}}`)).toBe(8);
      expect(at.get(`${histogram}_bucket{${labels},le="3600"}`)).toBe(8);
      expect(at.get(`${histogram}_bucket{${labels},le="+Inf"}`)).toBe(8);
    }
    // A local endpoint answers within a minute, and no job waited a minute to start.
    expect(at.get(`groupq_run_seconds_bucket{${labels},le="60"}`)).toBe(8);
    expect(at.get(`groupq_wait_seconds_bucket{${labels},le="60"}`)).toBe(8);
  });

  it('HELP lines point at the dashboard overview', async () => {
    const text = await (await scrape()).text();
    expect(text).toContain(`# HELP groupq_jobs Jobs by state: waiting, delayed, active. Overview: ${suite.worker.url}/dashboard/`);
  });

  it('the admin token opens it too; no token or another is 401', async () => {
    expect((await suite.worker.api('/metrics')).status).toBe(200);
    await expectError(await suite.worker.api('/metrics', { headers: { authorization: '' } }), 401, 'UNAUTHORIZED');
    await expectError(await scrape('not-the-metrics-token-000000'), 401, 'UNAUTHORIZED');
  });

  it('the metrics token opens nothing else', async () => {
    const headers = { authorization: `Bearer ${METRICS_TOKEN}` };
    await expectError(await suite.worker.api('/v1/queues', { headers }), 401, 'UNAUTHORIZED');
    await expectError(await suite.worker.api('/v1/queues/x/metrics', { headers }), 401, 'UNAUTHORIZED');
  });
});

describe('the starter Grafana dashboard (docs/grafana-dashboard.json)', () => {
  const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  // Grafana's $queue variable stands for a regex of queues.
  const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr.replaceAll('$queue', '.*')));

  it('every query is PromQL that promtool accepts', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'groupq-grafana-'));
    try {
      // promtool checks PromQL in rule files: each query becomes a recording rule.
      const rules = exprs.map((expr, i) => `      - record: groupq:panel_${i}\n        expr: ${JSON.stringify(expr)}`).join('\n');
      writeFileSync(path.join(dir, 'rules.yml'), `groups:\n  - name: grafana\n    rules:\n${rules}\n`);
      const run = spawnSync('promtool', ['check', 'rules', path.join(dir, 'rules.yml')], { encoding: 'utf8' });
      expect(`${run.stdout}${run.stderr}`).toContain(`SUCCESS: ${exprs.length} rules found`);
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('every metric it queries is one GET /metrics answers', async () => {
    const queue = uniqueQueue('graf');
    await putQueue(suite.worker, queue, { endpoint: endpoint.url });
    const text = await (await scrape()).text();
    const served = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [`${name}_bucket`] : [name!])));
    const queried = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b(groupq_[a-z_]+)\b/g)].map((match) => match[1]!)));
    expect([...queried].filter((name) => !served.has(name))).toEqual([]);
  });
});
