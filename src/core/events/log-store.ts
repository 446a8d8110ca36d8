// Where a queue's retention log (log.ts) keeps its rows and its few values (head, floor, wanted):
// the Durable Object's SQLite storage (hub.ts), or the Node server's memory (src/server/hub.ts,
// where a restart loses the log: a resume then is told it missed some, by the rules in log.ts).
// The rules (ids, gaps, trim, floor and head) are log.ts's alone; a store only answers what it
// is asked. The SQL store runs exactly the statements the log ran before there were two stores:
// a Durable Object bills rows read and written, so each statement here is one the hub pays for.
import type { StreamEventName } from '../../protocol/events';
import { type EventFilter, matches } from './wire';

/** An event as stored, and as snapshot() answers it: its SSE frame is made from these without parsing its data again. */
export interface StoredEvent {
  eventId: string;
  /** A job event's name, or `gap`: its group and job are '' then, and every filter wants it. */
  event: StreamEventName;
  group: string;
  job: string;
  /** The data as JSON text. */
  data: string;
}

/** A value kept beside the rows. */
export type LogKey = 'head' | 'floor' | 'wanted';

/** A row as appended: the event as stored, when, and its place in its partition (what movedOn reads). */
export interface LogRow extends StoredEvent {
  storedAt: number;
  part: string | null;
  pseq: number | null;
}

export interface LogStore {
  get(key: LogKey): string | null;
  set(key: LogKey, value: string): void;
  /** Appends `row`; answers its seq: arrival order, increasing, what the count trim cuts by. */
  insert(row: LogRow): number;
  /** Each row's seq and storedAt, oldest first, read as the caller walks (it stops early). */
  ages(): Iterable<{ seq: number; storedAt: number }>;
  /** Drops the rows up to seq `cut`; answers the id of the newest dropped, undefined when none was. */
  dropThrough(cut: number): string | undefined;
  /** Whether job `job` has a row of partition `part` numbered after `after`. */
  movedOn(part: string, job: string, after: number): boolean;
  /** The id of the oldest row that is not a gap's. */
  oldest(): string | null;
  /** The seq of the row with id `id`. */
  seqOf(id: string): number | undefined;
  /** The rows after seq `seq` (0: all) that are gaps or match `filter`, oldest first. */
  rowsAfter(seq: number, filter: EventFilter): StoredEvent[];
}

type Row = { id: string; name: string; grp: string; job: string; data: string };

const toStored = (row: Row): StoredEvent => ({ eventId: row.id, event: row.name as StreamEventName, group: row.grp, job: row.job, data: row.data });

/** The Durable Object's store: its SQLite tables `events` and `hub`. */
export function sqlLogStore(sql: SqlStorage): LogStore {
  // seq is the rowid: arrival order, and what the count trim cuts by. No index on id: a resume
  // looks one up (a scan of at most MAX_HELD_EVENTS rows), while every event would pay an index row.
  sql.exec(`CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY, id TEXT NOT NULL, stored_at INTEGER NOT NULL,
      grp TEXT NOT NULL, job TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
      part TEXT, pseq INTEGER)`);
  sql.exec('CREATE TABLE IF NOT EXISTS hub (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  return {
    get: (key) => sql.exec<{ value: string }>('SELECT value FROM hub WHERE key = ?', key).toArray()[0]?.value ?? null,
    set(key, value) {
      sql.exec('INSERT INTO hub (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value', key, value);
    },
    insert: (row) =>
      sql
        .exec<{ seq: number }>(
          'INSERT INTO events (id, stored_at, grp, job, name, data, part, pseq) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq',
          row.eventId, row.storedAt, row.group, row.job, row.event, row.data, row.part, row.pseq,
        )
        .one().seq,
    *ages() {
      for (const row of sql.exec<{ seq: number; stored_at: number }>('SELECT seq, stored_at FROM events ORDER BY seq')) {
        yield { seq: row.seq, storedAt: row.stored_at };
      }
    },
    dropThrough(cut) {
      const last = sql.exec<{ id: string }>('SELECT id FROM events WHERE seq <= ? ORDER BY seq DESC LIMIT 1', cut).toArray()[0];
      if (!last) return undefined;
      sql.exec('DELETE FROM events WHERE seq <= ?', cut);
      return last.id;
    },
    movedOn: (part, job, after) => sql.exec('SELECT 1 FROM events WHERE job = ? AND part = ? AND pseq > ? LIMIT 1', job, part, after).toArray().length > 0,
    oldest: () => sql.exec<{ id: string }>("SELECT id FROM events WHERE name != 'gap' ORDER BY seq LIMIT 1").toArray()[0]?.id ?? null,
    seqOf: (id) => sql.exec<{ seq: number }>('SELECT seq FROM events WHERE id = ?', id).toArray()[0]?.seq,
    rowsAfter: (seq, filter) =>
      sql
        .exec<Row>(
          `SELECT id, name, grp, job, data FROM events
         WHERE seq > ? AND (name = 'gap' OR ((? IS NULL OR grp = ?) AND (? IS NULL OR job = ?))) ORDER BY seq`,
          seq, filter.group ?? null, filter.group ?? null, filter.job ?? null, filter.job ?? null,
        )
        .toArray()
        .map(toStored),
  };
}

/**
 * The Node server's store: the rows in an array, oldest first. Seqs are consecutive and only the
 * oldest rows are dropped, so a seq's row is found by its distance from the first.
 */
export function memoryLogStore(): LogStore {
  const values = new Map<LogKey, string>();
  let rows: (LogRow & { seq: number })[] = [];
  const seqs = new Map<string, number>();
  let lastSeq = 0;
  const indexAfter = (seq: number) => (rows.length === 0 ? 0 : Math.max(0, seq - rows[0]!.seq + 1));
  return {
    get: (key) => values.get(key) ?? null,
    set(key, value) {
      values.set(key, value);
    },
    insert(row) {
      const seq = ++lastSeq;
      rows.push({ ...row, seq });
      if (!seqs.has(row.eventId)) seqs.set(row.eventId, seq);
      return seq;
    },
    ages: () => rows,
    dropThrough(cut) {
      const n = indexAfter(cut);
      if (n === 0) return undefined;
      const dropped = rows.slice(0, n);
      rows = rows.slice(n);
      for (const row of dropped) if (seqs.get(row.eventId) === row.seq) seqs.delete(row.eventId);
      return dropped[dropped.length - 1]!.eventId;
    },
    movedOn: (part, job, after) => rows.some((row) => row.job === job && row.part === part && row.pseq !== null && row.pseq > after),
    oldest: () => rows.find((row) => row.event !== 'gap')?.eventId ?? null,
    seqOf: (id) => seqs.get(id),
    rowsAfter: (seq, filter) =>
      rows
        .slice(indexAfter(seq))
        .filter((row) => row.event === 'gap' || matches(filter, row.group, row.job))
        .map(({ eventId, event, group, job, data }) => ({ eventId, event, group, job, data })),
  };
}
