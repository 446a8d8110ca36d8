// Two connected ends that stand in for a WebSocket between a stream and its hub in one process
// (hub.ts): what one end sends, the other end's listeners get, later (never within the send:
// the hub sends while it walks its list of sockets) and in the order sent. An end holds what
// comes until it has a listener, as a Worker's WebSocket does until accept(): the stream adds
// its listeners only once subscribe() has resolved. A close ends both: the other end's listeners
// hear it after what was sent before it, and a send after it is dropped.
import type { HubSocket } from '../core/events/hubs';

type Item = { kind: 'message'; data: string } | { kind: 'close' };

export class PairEnd implements HubSocket {
  /** The other end; set by socketPair(). */
  private peer!: PairEnd;
  private readonly inbox: Item[] = [];
  private readonly messageListeners: ((event: { data: unknown }) => void)[] = [];
  private readonly closeListeners: (() => void)[] = [];
  private closed = false;
  private delivering = false;

  static pair(): [PairEnd, PairEnd] {
    const a = new PairEnd();
    const b = new PairEnd();
    a.peer = b;
    b.peer = a;
    return [a, b];
  }

  send(text: string): void {
    if (this.closed) return;
    this.peer.receive({ kind: 'message', data: text });
  }

  /** Closes both ends; each end's close listeners are called once, after what came before. */
  close(): void {
    if (this.closed) return;
    this.closed = this.peer.closed = true;
    this.peer.receive({ kind: 'close' });
    this.receive({ kind: 'close' });
  }

  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close' | 'error', listener: () => void): void;
  addEventListener(type: 'message' | 'close' | 'error', listener: ((event: { data: unknown }) => void) | (() => void)): void {
    // No end here fails on its own: 'error' never comes.
    if (type === 'message') this.messageListeners.push(listener);
    else if (type === 'close') this.closeListeners.push(listener as () => void);
    this.schedule();
  }

  private receive(item: Item): void {
    this.inbox.push(item);
    this.schedule();
  }

  /** Delivers the inbox on a later turn, once someone listens. */
  private schedule(): void {
    if (this.delivering || this.inbox.length === 0 || this.messageListeners.length + this.closeListeners.length === 0) return;
    this.delivering = true;
    setImmediate(() => {
      this.delivering = false;
      // What a listener sends meanwhile goes to the other end, or after these, on a later turn.
      for (const item of this.inbox.splice(0)) {
        if (item.kind === 'message') for (const listener of this.messageListeners) listener({ data: item.data });
        else for (const listener of this.closeListeners) listener();
      }
    });
  }
}
