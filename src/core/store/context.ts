// What every engine operation is given: a Redis script runner, a clock and deployment options.
import type { ConfigOptions } from '../../protocol/config';
import type { PartitionCounts } from './partitions';
import type { EventPlace, ScriptEvent } from './events';
import type { Pool } from './pool';
import type { ScriptRunner } from './scripts';

export interface EngineContext {
  /** Where scripts run: one database's client, or a pool's runner that sends each where its queue lives. */
  redis: ScriptRunner;
  /** The pool `redis` routes over, when it is one (pool.ts): placing queues, moving partitions, each database's due index. */
  pool?: Pool;
  /** Epoch milliseconds; tests inject a clock. */
  now: () => number;
  options: ConfigOptions;
  /** Send scripts with Upstash's allow-key-locking flag (ScriptOptions). @default true */
  keyLocking?: boolean;
  /** Where the job events scripts report go (ScriptContext.onEvents): the Worker's hub forwarding. */
  onEvents?: (tag: string, events: ScriptEvent[], place: EventPlace) => void;
  /** What this isolate has learned of queues' partition counts (src/core/engine/partitions.ts). */
  partitions?: PartitionCounts;
}

// What an operation is called with: one object, named as the HTTP route names its parts (path
// parameters, `body`, `query`), so a route passes what it read as it is (src/handlers/mount.ts).
export interface QueueRef {
  queue: string;
}
export interface JobRef extends QueueRef {
  id: string;
}
export interface GroupRef extends QueueRef {
  group: string;
}
export interface RepeatRef extends QueueRef {
  key: string;
}
/** A request's JSON body, as sent: the operation parses it. */
export interface Body {
  body: unknown;
}
/** A request's query parameters, as sent: the operation parses them. */
export interface Query {
  query?: unknown;
}
