// What a request asks of a queue's event hub, wherever the hub lives: a Durable Object for a
// Worker (hub.ts), an object in the process for the Node server (src/server). A stream attaches
// with subscribe() and reads HubMessage JSON from the socket it gets (wire.ts): the hello first.
import type { EventFilter, PublishedEvent, Resume } from './wire';
import type { StoredEvent } from './log';

/** What publish() answers: how many events went out and to how many streams; held and dropped only when some were. */
export interface Published {
  stored: number;
  streams: number;
  /** Events the hub holds now, waiting for those before them. */
  held?: number;
  /** Events of this call dropped: a number that came again, or a progress whose job had moved on (order.ts). */
  dropped?: number;
}

export interface Snapshot extends Resume {
  /** The newest id the hub has given (see Hello). */
  head: string;
  /** Their data as JSON text: a reader frames it as it is (log.ts frameOf). */
  events: StoredEvent[];
}

/** The stream's end of its link to the hub: a WebSocket in a Worker, an in-process pair on Node. */
export interface HubSocket {
  send(text: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close' | 'error', listener: () => void): void;
}

export interface HubStub {
  /** Takes one script call's events, in order (hub.ts publish). */
  publish(events: PublishedEvent[]): Promise<Published>;
  /** The held events after `since` that match `filter`. */
  snapshot(filter: EventFilter, since?: string): Promise<Snapshot>;
  /** Attaches a stream with `filter`, resuming after `since`: the socket the hub's messages come on. */
  subscribe(filter: EventFilter, since: string | undefined): Promise<HubSocket>;
}
