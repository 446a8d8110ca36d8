// Server-Sent Events framing, as the WHATWG HTML standard's "Server-sent events" section says
// ("Parsing an event stream", "Interpreting an event stream"): the Worker encodes its streams
// with the encoders, the client kit and the CLI read them with SseParser (fetch gives bytes in
// chunks; EventSource is the browser's own). A plain module, no zod: dist/client.js imports
// nothing. Lines end with LF on the way out; all three line ends are read.

/** A stream's Content-Type. Always UTF-8: the standard allows no other encoding. */
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** One event to send: `data` is text (the reader gets it back with each line end as LF). */
export interface SseMessage {
  /** The `event:` name; none (or '') and the reader's type is "message". No CR or LF. */
  event?: string;
  /** The `id:` the reader keeps as its last event id ('' clears it). No CR, LF or NUL. */
  id?: string;
  data: string;
}

const LINE_END = /\r\n|\r|\n/;
const CR_LF = /[\r\n]/;

/**
 * Field values always follow "field: ": a reader drops one space after the colon, so a value
 * that starts with a space keeps it. An empty line is written `field:`.
 */
function field(name: string, value: string): string {
  return value === '' ? `${name}:\n` : `${name}: ${value}\n`;
}

/**
 * One event, ended by the blank line that dispatches it. Multi-line data becomes one `data:` line
 * per line (a CR, LF or CRLF in `data` ends one), which the reader joins with LF. A name or an id
 * that would break the framing is refused rather than cut: a reader would see another stream.
 */
export function encodeMessage({ event, id, data }: SseMessage): string {
  let out = '';
  if (event !== undefined && event !== '') {
    if (CR_LF.test(event)) throw new TypeError('an SSE event name cannot contain CR or LF');
    out += field('event', event);
  }
  if (id !== undefined) {
    // A reader ignores an id with NUL (the standard says so): the reader would then resume from
    // an older event than the one it got, and see it twice.
    if (/[\r\n\0]/.test(id)) throw new TypeError('an SSE id cannot contain CR, LF or NUL');
    out += field('id', id);
  }
  for (const line of data.split(LINE_END)) out += field('data', line);
  return `${out}\n`;
}

/** One event whose data is `value` as JSON (one line: JSON.stringify escapes CR and LF). */
export function encodeEvent(event: string, value: unknown, id?: string): string {
  const data = JSON.stringify(value);
  if (data === undefined) throw new TypeError(`an SSE event's data must be JSON, got ${typeof value}`);
  return encodeMessage(id === undefined ? { event, data } : { event, id, data });
}

/**
 * A comment: readers ignore it, proxies see bytes flow, so an idle stream stays open. Needs no
 * blank line, so it may go between any two events.
 */
export function encodeComment(text = ''): string {
  return text.split(LINE_END).map((line) => (line === '' ? ':\n' : `: ${line}\n`)).join('');
}

/** How long a reader waits before it reconnects, sent before a stream ends on purpose. */
export function encodeRetry(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`retry must be a whole number of ms, got ${ms}`);
  return `retry: ${ms}\n`;
}

/** One dispatched event, as EventSource's MessageEvent has it. */
export interface SseEvent {
  /** The `event:` name, or "message" when it had none. */
  type: string;
  data: string;
  /** The stream's last event id when it was dispatched: its own `id:`, or the latest before it. */
  lastEventId: string;
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = '\uFEFF';

/**
 * An incremental reader of one event stream after another (one per connection): bytes or text in
 * chunks of any size, dispatched events out. It decodes UTF-8 across chunk boundaries (an invalid
 * sequence becomes U+FFFD, one leading BOM is dropped), takes CRLF, LF and CR as line ends (also a
 * CR at the end of one chunk and an LF at the start of the next), and keeps the last event id and
 * the reconnection time across events and across connections, as EventSource does.
 */
export class SseParser {
  private decoder = new TextDecoder();
  private bomChecked = false;
  private line = '';
  /** The previous chunk ended with CR: an LF opening this one belongs to that line end. */
  private afterCr = false;
  private data = '';
  private type = '';
  /** The standard's "last event ID buffer": an `id:` sets it, the next blank line publishes it. */
  private idBuffer: string;
  private lastId: string;
  private reconnectMs: number | undefined;

  /** `lastEventId`: the id a new connection resumes after, kept until the stream sends another. */
  constructor(options: { lastEventId?: string } = {}) {
    this.lastId = this.idBuffer = options.lastEventId ?? '';
  }

  /** What a reconnect sends as `Last-Event-ID` (none when ''). Moves only when an event ends. */
  get lastEventId(): string {
    return this.lastId;
  }

  /** The last `retry:` read: how long to wait before reconnecting; undefined until one comes. */
  get retry(): number | undefined {
    return this.reconnectMs;
  }

  /** Reads one chunk; returns the events it completed (a blank line ends each). */
  feed(chunk: Uint8Array | string): SseEvent[] {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
      if (!this.bomChecked && text !== '' && text.startsWith(BOM)) text = text.slice(1);
    } else {
      text = this.decoder.decode(chunk, { stream: true }); // TextDecoder drops the BOM itself
    }
    if (text !== '') this.bomChecked = true;
    return this.scan(text);
  }

  /**
   * The connection ended: reads what the decoder held, then drops an event it did not see the end
   * of (the standard discards it: its `id:` does not count either), and readies for the next
   * connection, which keeps lastEventId and retry.
   */
  end(): SseEvent[] {
    const events = this.scan(this.decoder.decode());
    this.decoder = new TextDecoder();
    this.bomChecked = false;
    this.line = '';
    this.afterCr = false;
    this.data = '';
    this.type = '';
    this.idBuffer = this.lastId;
    return events;
  }

  /** Splits `text` into lines, joined to what the previous chunks left unfinished. */
  private scan(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.afterCr && text !== '') {
      if (text.charCodeAt(0) === LF) start = 1;
      this.afterCr = false;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      const line = this.line + text.slice(start, i);
      this.line = '';
      if (c === CR) {
        if (i + 1 === text.length) this.afterCr = true;
        else if (text.charCodeAt(i + 1) === LF) i++;
      }
      start = i + 1;
      this.readLine(line, events);
    }
    this.line += text.slice(start);
    return events;
  }

  private readLine(line: string, events: SseEvent[]): void {
    if (line === '') return this.dispatch(events);
    if (line.charCodeAt(0) === 0x3a) return; // ":": a comment
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    switch (name) {
      case 'event':
        this.type = value;
        break;
      case 'data':
        this.data += `${value}\n`;
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.reconnectMs = Number(value);
        break;
      default: // another field: ignored, as the standard says
    }
  }

  /** A blank line: the id becomes the stream's, then the event goes out if it has data. */
  private dispatch(events: SseEvent[]): void {
    this.lastId = this.idBuffer;
    if (this.data === '') {
      this.type = '';
      return;
    }
    events.push({ type: this.type === '' ? 'message' : this.type, data: this.data.slice(0, -1), lastEventId: this.lastId });
    this.data = '';
    this.type = '';
  }
}
