// Where a queue's order (order.ts) keeps what must outlive the hub's memory: each partition's
// last number and the events it holds. In a Durable Object, its SQLite storage (hibernation drops
// the memory; hub.ts). On the Node server the hub lives as long as its process, so the order's
// own memory is all there is, and its store keeps nothing (a restart starts every partition
// over: its stragglers go out as they come, and streams resume from a log that lost them too).
// The SQL store runs exactly the statements the order ran before there were two stores: a
// Durable Object bills rows read and written.
import type { PublishedEvent } from './wire';

export interface OrderStore {
  /** Each partition's sequence as last stored. */
  parts(): Iterable<{ part: string; epoch: number; last: number }>;
  /** The events held, in the order they were stored, each with its row. */
  held(): Iterable<{ row: number; part: string; arrived: number; event: PublishedEvent }>;
  /** Stores a held event; answers its row. */
  hold(part: string, arrived: number, event: PublishedEvent): number;
  /** Forgets the held event of `row`: it went out. */
  letGo(row: number): void;
  savePart(part: string, epoch: number, last: number): void;
}

/** The Durable Object's store: its SQLite tables `parts` and `held`. */
export function sqlOrderStore(sql: SqlStorage): OrderStore {
  sql.exec('CREATE TABLE IF NOT EXISTS parts (part TEXT PRIMARY KEY, epoch INTEGER NOT NULL, last INTEGER NOT NULL)');
  sql.exec('CREATE TABLE IF NOT EXISTS held (row INTEGER PRIMARY KEY, part TEXT NOT NULL, arrived INTEGER NOT NULL, event TEXT NOT NULL)');
  return {
    parts: () => sql.exec<{ part: string; epoch: number; last: number }>('SELECT part, epoch, last FROM parts'),
    *held() {
      for (const row of sql.exec<{ row: number; part: string; arrived: number; event: string }>('SELECT row, part, arrived, event FROM held ORDER BY row')) {
        yield { row: row.row, part: row.part, arrived: row.arrived, event: JSON.parse(row.event) as PublishedEvent };
      }
    },
    hold: (part, arrived, event) =>
      sql.exec<{ row: number }>('INSERT INTO held (part, arrived, event) VALUES (?, ?, ?) RETURNING row', part, arrived, JSON.stringify(event)).one().row,
    letGo(row) {
      sql.exec('DELETE FROM held WHERE row = ?', row);
    },
    savePart(part, epoch, last) {
      sql.exec(
        'INSERT INTO parts (part, epoch, last) VALUES (?, ?, ?) ON CONFLICT (part) DO UPDATE SET epoch = excluded.epoch, last = excluded.last',
        part, epoch, last,
      );
    },
  };
}

/** The Node server's store: nothing beyond the order's memory (rows are only numbered). */
export function memoryOrderStore(): OrderStore {
  let rows = 0;
  return {
    parts: () => [],
    held: () => [],
    hold: () => ++rows,
    letGo() {},
    savePart() {},
  };
}
