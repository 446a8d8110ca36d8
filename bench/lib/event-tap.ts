// A reader of one event stream for the events rows (bench/lib/events.ts): a queue's SSE stream
// opened with node:http and read with the Worker's own SseParser (src/protocol/sse.ts), noting for
// each event when this process read it. node:http and not fetch: undici's fetch asks for gzip,
// and a compressed stream would be held back to fill its blocks, which is a cost of the reader's
// choosing and not of the stream. A read time is taken once per chunk, before parsing, so a
// thousand readers in one process are not charged for each other's JSON.parse.
import http from 'node:http';
import { SseParser } from '../../src/protocol/sse';
import { sleep } from './workload';

/** One job event as the reader got it. */
export interface TappedEvent {
  /** `added`, `active`, `completed`, ... */
  event: string;
  /** The job's id. */
  id: string;
  /** The event's `at`: when the change happened, epoch ms by the Worker's clock (the same machine's). */
  at: number;
  /** Date.now() when the chunk that carried it arrived here. */
  readAt: number;
}

export interface EventTap {
  /** Every job event read so far, in order. */
  events: TappedEvent[];
  /** `gap` events read (a resume from too far back, or events that never reached the hub). */
  gaps: number;
  /** Whether the server ended the stream (the hub went, or the reader fell too far behind). */
  ended(): boolean;
  /** Leaves: the connection is cut, as a reader that goes away. */
  close(): void;
}

/**
 * Opens `url` with the admin token; resolves once the answer's headers came, which the Worker
 * sends only after the stream is attached to its hub and the queue's scripts were asked for
 * events: every change after that reaches this reader.
 */
export function openTap(url: string, token: string): Promise<EventTap> {
  return new Promise((resolve, reject) => {
    // agent: false, a connection of its own: a stream never gives its socket back to a pool.
    const req = http.get(url, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => reject(new Error(`events: ${url} answered ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`)));
        return;
      }
      const parser = new SseParser();
      let ended = false;
      const tap: EventTap = {
        events: [],
        gaps: 0,
        ended: () => ended,
        close: () => {
          ended = true;
          req.destroy();
        },
      };
      res.on('data', (chunk: Buffer) => {
        const readAt = Date.now();
        for (const { type, data } of parser.feed(chunk)) {
          if (type === 'gap') {
            tap.gaps++;
            continue;
          }
          const { id, at } = JSON.parse(data) as { id: string; at: number };
          tap.events.push({ event: type, id, at, readAt });
        }
      });
      res.on('end', () => (ended = true));
      res.on('error', () => (ended = true));
      resolve(tap);
    });
    req.on('error', reject);
  });
}

/** Waits until `check` holds, polling every 20 ms; rejects after `timeoutMs` with what it waited for. */
export async function until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`events: timed out waiting for ${what()}`);
    await sleep(20);
  }
}
