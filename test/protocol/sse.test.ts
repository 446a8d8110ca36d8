// SSE framing (src/protocol/sse.ts) against the WHATWG rules and against eventsource-parser, the
// ecosystem's most used parser: what our encoder writes, it reads back as sent; our SseParser reads
// the same streams the same way, cut into chunks at every byte (mid-line, mid-UTF-8 sequence,
// between CR and LF), with each line end, a BOM, comments, retry and the id rules.
import { createParser } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { type SseEvent, type SseMessage, SseParser, encodeComment, encodeEvent, encodeMessage, encodeRetry } from '../../src/protocol/sse';

const MESSAGES: SseMessage[] = [
  { event: 'added', id: '1700000000000-0', data: JSON.stringify({ id: 'j1', group: 'grüppe 1', note: 'a\nb\r\nc' }) },
  { event: 'progress', id: '1700000000000-1', data: '{"progress":"日本語 🎉 é"}' },
  { data: 'no name, no id' },
  { event: 'multi', id: 'id with spaces  inside ', data: 'first\nsecond\r\nthird\rfourth' },
  { event: 'edge', id: ' leading space', data: ' leading space\n\nthen an empty line and a last one\n' },
  { event: 'empty', data: '' },
  { event: 'colon:in:name', data: 'data: like a field\n: like a comment\nid: not an id\nretry: 1' },
  { event: 'unicode ☃', id: 'ü-1', data: '\u2028 and \u0085 end no line' },
];

/** What a reader gets back of a message: line ends in data become LF. */
const expected = (m: SseMessage) => ({ type: m.event || 'message', data: m.data.replace(/\r\n|\r/g, '\n') });
const STREAM = MESSAGES.map((m, i) => (i === 2 ? encodeComment('keep-alive') + encodeRetry(2500) : '') + encodeMessage(m)).join('');
const EXPECTED = MESSAGES.map(expected);
/** The stream's last event id after each message: an event without `id:` keeps the one before. */
const LAST_IDS = MESSAGES.reduce<string[]>((ids, m) => [...ids, m.id ?? ids.at(-1) ?? ''], []);
const bytesOf = (text: string) => new TextEncoder().encode(text);

/** eventsource-parser's reading of byte chunks, decoded as a fetch reader would. */
function reference(chunks: Uint8Array[]) {
  const events: { type: string; data: string; id: string | undefined }[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (e) => events.push({ type: e.event ?? 'message', data: e.data, id: e.id }),
    onRetry: (ms) => retries.push(ms),
    onComment: (text) => comments.push(text),
  });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return { events, retries, comments };
}

/** Our reading of the same chunks. */
function ours(chunks: (Uint8Array | string)[], parser = new SseParser()): SseEvent[] {
  const events = chunks.flatMap((chunk) => parser.feed(chunk));
  return [...events, ...parser.end()];
}

const withoutIds = (events: SseEvent[]) => events.map(({ type, data }) => ({ type, data }));

describe('encoder, read by eventsource-parser', () => {
  it('reads back every name, id and data as sent, the comment and the retry', () => {
    const read = reference([bytesOf(STREAM)]);
    expect(read.events.map(({ type, data }) => ({ type, data }))).toEqual(EXPECTED);
    expect(read.events.map((e) => e.id)).toEqual(MESSAGES.map((m) => m.id));
    expect(read.comments).toEqual(['keep-alive']);
    expect(read.retries).toEqual([2500]);
  });

  it('reads JSON events (encodeEvent) as one data line each', () => {
    const value = { text: 'line\nbreak\r\n', emoji: '🎉', nul: '\0', ls: '\u2028' };
    const text = encodeEvent('progress', value, '5-1');
    expect(text.split('\n').filter((l) => l.startsWith('data:'))).toHaveLength(1);
    const [event] = reference([bytesOf(text)]).events;
    expect(event?.type).toBe('progress');
    expect(event?.id).toBe('5-1');
    expect(JSON.parse(event!.data)).toEqual(value);
  });

  it('reads the same at every split of the stream into two chunks', () => {
    const bytes = bytesOf(STREAM);
    for (let k = 1; k < bytes.length; k++) {
      expect(reference([bytes.slice(0, k), bytes.slice(k)]).events.map(({ type, data }) => ({ type, data })), `split at ${k}`).toEqual(EXPECTED);
    }
  });

  it('refuses what would break the framing', () => {
    for (const id of ['a\nb', 'a\rb', 'a\0b']) expect(() => encodeMessage({ id, data: 'x' })).toThrow(TypeError);
    for (const event of ['a\nb', 'a\r']) expect(() => encodeMessage({ event, data: 'x' })).toThrow(TypeError);
    expect(() => encodeRetry(-1)).toThrow(RangeError);
    expect(() => encodeRetry(1.5)).toThrow(RangeError);
    expect(() => encodeEvent('x', undefined)).toThrow(TypeError);
  });
});

describe('SseParser', () => {
  it('reads the stream as eventsource-parser does, with the last event id of each', () => {
    const events = ours([bytesOf(STREAM)]);
    expect(withoutIds(events)).toEqual(EXPECTED);
    expect(events.map((e) => e.lastEventId)).toEqual(LAST_IDS);
  });

  it('reads the same at every split into two chunks, and byte by byte', () => {
    const bytes = bytesOf(STREAM);
    for (let k = 1; k < bytes.length; k++) expect(withoutIds(ours([bytes.slice(0, k), bytes.slice(k)])), `split at ${k}`).toEqual(EXPECTED);
    expect(ours([...bytes].map((b) => Uint8Array.of(b))).map((e) => e.lastEventId)).toEqual(LAST_IDS);
  });

  it('reads a multi-byte UTF-8 payload cut at every pair of byte positions', () => {
    const text = encodeEvent('progress', { v: 'é 日本 🎉 \u{10FFFF}' }, '1-0');
    const bytes = bytesOf(text);
    const want = [{ type: 'progress', data: JSON.stringify({ v: 'é 日本 🎉 \u{10FFFF}' }), lastEventId: '1-0' }];
    for (let i = 1; i < bytes.length; i++) {
      for (let j = i; j < bytes.length; j++) {
        expect(ours([bytes.slice(0, i), bytes.slice(i, j), bytes.slice(j)]), `cut at ${i} and ${j}`).toEqual(want);
      }
    }
  });

  it('takes CRLF, LF and CR as line ends, also a CR and its LF in two chunks', () => {
    for (const end of ['\r\n', '\r']) {
      const bytes = bytesOf(STREAM.replaceAll('\n', end));
      // eventsource-parser holds a CR that ends a chunk until the next chunk says whether LF follows.
      const next = end === '\r' ? [bytesOf(':\r')] : [];
      expect(reference([bytes, ...next]).events.map(({ type, data }) => ({ type, data })), JSON.stringify(end)).toEqual(EXPECTED);
      for (let k = 1; k < bytes.length; k++) expect(withoutIds(ours([bytes.slice(0, k), bytes.slice(k)])), `${JSON.stringify(end)} at ${k}`).toEqual(EXPECTED);
    }
    // Ours dispatches on a chunk's last CR at once: an LF opening the next chunk is skipped then.
    const parser = new SseParser();
    expect(parser.feed('data: now\r\r')).toEqual([{ type: 'message', data: 'now', lastEventId: '' }]);
    expect(parser.feed('\ndata: next\n\n')).toEqual([{ type: 'message', data: 'next', lastEventId: '' }]);
  });

  it('drops one leading BOM, also cut across chunks, and only one', () => {
    const bytes = bytesOf(`\uFEFF${STREAM}`);
    for (const k of [1, 2, 3, 4]) expect(withoutIds(ours([bytes.slice(0, k), bytes.slice(k)])), `at ${k}`).toEqual(EXPECTED);
    expect(withoutIds(ours([`\uFEFF${STREAM}`]))).toEqual(EXPECTED);
    // The second BOM is part of the first line's field name: an unknown field, so no event.
    expect(ours([bytesOf('\uFEFF\uFEFFdata: x\n\n')])).toEqual([]);
  });

  it('decodes an invalid UTF-8 sequence as U+FFFD', () => {
    const bytes = Uint8Array.of(...bytesOf('data: a'), 0xff, 0xc3, ...bytesOf('b\n\n'));
    expect(ours([bytes])).toEqual([{ type: 'message', data: 'a\uFFFD\uFFFDb', lastEventId: '' }]);
  });

  it('keeps the last event id until another, ignores one with NUL, and clears on an empty one', () => {
    const events = ours(['id: 1\ndata: a\n\n', 'data: b\n\n', 'id: x\0y\ndata: c\n\n', 'id\ndata: d\n\n', 'id:  two spaces\ndata: e\n\n']);
    expect(events.map((e) => [e.data, e.lastEventId])).toEqual([['a', '1'], ['b', '1'], ['c', '1'], ['d', ''], ['e', ' two spaces']]);
    // An id-only block dispatches no event but moves the id a reconnect sends.
    const parser = new SseParser();
    expect(parser.feed('id: 7-0\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('7-0');
  });

  it('keeps the id across connections, and drops an event whose end did not come', () => {
    const parser = new SseParser({ lastEventId: '3-0' });
    expect(parser.feed('data: a\n\n')).toEqual([{ type: 'message', data: 'a', lastEventId: '3-0' }]);
    expect(parser.feed('id: 4-0\ndata: cut')).toEqual([]);
    expect(parser.end()).toEqual([]);
    expect(parser.lastEventId).toBe('3-0'); // the cut event's id does not count
    expect(parser.feed(bytesOf('\uFEFFdata: b\n\n'))).toEqual([{ type: 'message', data: 'b', lastEventId: '3-0' }]);
    expect(parser.feed('id: 4-0\ndata: c\n')).toEqual([]);
    expect(parser.end()).toEqual([]);
    expect(parser.lastEventId).toBe('3-0');
  });

  it('sets retry from digits only, and keeps it across connections', () => {
    const parser = new SseParser();
    expect(parser.retry).toBeUndefined();
    parser.feed(encodeRetry(2500));
    for (const bad of ['retry: 25x\n', 'retry: -1\n', 'retry: 1.5\n', 'retry:\n', 'retry:  7\n']) parser.feed(bad);
    expect(parser.retry).toBe(2500);
    parser.end();
    expect(parser.retry).toBe(2500);
    parser.feed('retry:0\n');
    expect(parser.retry).toBe(0);
    expect(reference([bytesOf('retry: 25x\nretry: 40\n')]).retries).toEqual([40]);
  });

  it('ignores comments and unknown fields, also inside an event; a field without a colon is empty', () => {
    const text = `data: a\n${encodeComment('one\ntwo')}:\nfoo: bar\ndata: b\n\ndata\n\ndata\ndata\n\nevent: x\n\n`;
    const want = [{ type: 'message', data: 'a\nb' }, { type: 'message', data: '' }, { type: 'message', data: '\n' }];
    expect(withoutIds(ours([text]))).toEqual(want);
    expect(reference([bytesOf(text)]).events.map(({ type, data }) => ({ type, data }))).toEqual(want);
    expect(reference([bytesOf(text)]).comments).toEqual(['one', 'two', '']);
  });
});
