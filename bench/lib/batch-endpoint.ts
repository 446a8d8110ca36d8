// The batch rows' loopback endpoint (bench/lib/batch.ts): it answers every delivery 200 with an
// empty body (which completes every job of a batch, docs/batches.md) after `delayMs`, and keeps
// a record of each delivery: its group, its jobs' ids and attempts in the order they came, when
// it arrived and when it was answered. The order checker (batch-order.ts) reads those records.
// A batch queue's delivery names its jobs only in its body ({id, queue, group, jobs: [...]}), so
// the body is read and parsed here; a queue without `batch` sends one job's body, recorded as a
// delivery of one job, so that the same checker covers the run without batches.
// It has the shape of e2e-stack.ts's LoopbackEndpoint (first arrival per job id, every push in
// order), so that waitDelivered and measured() work with it unchanged.
import http from 'node:http';
import { type Arrival, type LoopbackEndpoint, listenOnLoopback } from './e2e-stack';

/** One delivery as the endpoint saw it. */
export interface DeliveryRecord {
  /** The webhook-id: `bat_...` for a batch, `msg_...` for a single job. */
  webhookId: string;
  /** The body carried a `jobs` array (a batch queue's delivery, even of one job). */
  batch: boolean;
  group: string;
  /** The jobs' ids, in the order the body listed them. */
  ids: string[];
  /** Each job's attempt number, in the same order. */
  attempts: number[];
  /** performance.now() when the request's headers came. */
  arrivedAt: number;
  /** performance.now() just before the answer went out (undefined: not answered yet). */
  answeredAt?: number;
}

export interface BatchEndpoint extends LoopbackEndpoint {
  /** How long each answer waits (ms); may change between runs. */
  delayMs: number;
  /** Every delivery since the last reset, in arrival order. */
  records: DeliveryRecord[];
  /** Deliveries whose body could not be read as a job or a batch (must be 0). */
  unreadable: number;
}

interface JobBody {
  id: string;
  group: string;
  attempt: number;
}

/** The delivery's jobs as its body lists them: a batch's `jobs`, or the one job itself. */
function jobsOf(body: unknown): { batch: boolean; group: string; jobs: JobBody[] } | null {
  if (typeof body !== 'object' || body === null) return null;
  const b = body as { group?: unknown; jobs?: unknown; id?: unknown; attempt?: unknown };
  if (Array.isArray(b.jobs)) return { batch: true, group: String(b.group), jobs: b.jobs as JobBody[] };
  if (typeof b.id === 'string') return { batch: false, group: String(b.group), jobs: [b as JobBody] };
  return null;
}

export async function startBatchEndpoint(delayMs = 0): Promise<BatchEndpoint> {
  const endpoint: BatchEndpoint = {
    url: '',
    delayMs,
    records: [],
    unreadable: 0,
    arrivals: new Map<string, Arrival>(),
    duplicates: 0,
    order: [],
    reset() {
      endpoint.records = [];
      endpoint.unreadable = 0;
      endpoint.arrivals.clear();
      endpoint.duplicates = 0;
      endpoint.order = [];
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const arrivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let parsed: ReturnType<typeof jobsOf> = null;
      try {
        parsed = jobsOf(JSON.parse(Buffer.concat(chunks).toString()));
      } catch {
        parsed = null;
      }
      // The record is made before the wait, so that an answer's time is always after its arrival's.
      const record: DeliveryRecord | null = parsed && {
        webhookId: String(req.headers['webhook-id'] ?? ''),
        batch: parsed.batch,
        group: parsed.group,
        ids: parsed.jobs.map((job) => job.id),
        attempts: parsed.jobs.map((job) => job.attempt),
        arrivedAt,
      };
      if (record) {
        endpoint.records.push(record);
        record.ids.forEach((id, i) => {
          if (endpoint.arrivals.has(id)) endpoint.duplicates++;
          else endpoint.arrivals.set(id, { at: arrivedAt, attempt: record.attempts[i]! });
          endpoint.order.push(id);
        });
      } else {
        endpoint.unreadable++;
      }
      const answer = () => {
        if (record) record.answeredAt = performance.now();
        res.writeHead(200, { 'content-length': '0' }).end();
      };
      if (endpoint.delayMs > 0) setTimeout(answer, endpoint.delayMs);
      else answer();
    });
  });
  ({ url: endpoint.url, close: endpoint.close } = await listenOnLoopback(server, '/batches'));
  return endpoint;
}
