// Scripts number the job events they report (meta's `es`, src/lua/includes/meta.lua placeEvents),
// per partition, in the HSET of meta each such call makes anyway: the places the Worker hands the
// hub (callScript's onEvents) for a job's whole life, a progress that numbers none and follows,
// a partitioned queue's two sequences, a queue made again starting a later one; and the commands
// the same with and without events wanted (INFO commandstats), progress included.
import { describe, expect, it } from 'vitest';
import { countsOf } from '../../bench/lib/redis-stats';
import { createEngine } from '../../src/core/engine';
import type { EventPlace, ScriptEvent } from '../../src/core/store/events';
import { queueKeys } from '../../src/core/store/keys';
import { partitionTags } from '../../src/core/store/partitions';
import { createRedis } from '../../src/core/store/redis';
import { T0, usePrivateEngine } from '../helpers/engine';
import { uniqueName } from '../helpers/stack';

const env = usePrivateEngine();
const HOUR = 3_600_000;

/** One onEvents call: the tag the script ran on, its events' names and job ids, their place. */
interface Told {
  tag: string;
  events: string[];
  place: EventPlace;
}

/** An engine on the file's stack and clock whose scripts' events are recorded as the Worker gets them. */
function recordingEngine() {
  const told: Told[] = [];
  const engine = createEngine({
    redis: createRedis({ url: env.stack.restUrl, token: env.stack.restToken }),
    now: env.clock.now,
    allowHttpLoopback: true,
    onEvents: (tag: string, events: ScriptEvent[], place: EventPlace) => told.push({ tag, events: events.map(({ event, data }) => `${event} ${data.id}`), place }),
  });
  return { engine, told };
}

async function newQueue(engine: ReturnType<typeof createEngine>, config: Record<string, unknown> = {}, name = uniqueName('order')): Promise<string> {
  await engine.putQueue(name, { endpoint: 'http://127.0.0.1:9/jobs', maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: false }, ...config });
  return name;
}

/** Meta's `es` as text (the raw client answers bytes), null when absent. */
const metaEs = async (key: string) => {
  const value = await env.admin.call(['HGET', key, 'es']);
  return value === null ? null : String(value);
};

describe('scripts number the events they report, per partition', () => {
  it("a job's life: each call's events take the next numbers; a progress takes none and follows the newest", async () => {
    env.clock.set(T0);
    const { engine, told } = recordingEngine();
    const q = await newQueue(engine);
    await engine.wantEvents(q, T0 + HOUR);
    const [a] = (await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1)).leased; // added a, active a
    await engine.enqueueAndReserve(q, { id: 'b', group: 'h' }, 0); // added b
    expect(await engine.reserve(q, 0)).toMatchObject({ jobs: [] }); // no event, no call
    await engine.recordProgress(q, { id: 'a', lease: a!.lease.token, progress: 50 });
    await engine.fail(q, { id: 'a', lease: a!.lease.token, error: 'boom' }); // retrying a
    const [again] = (await engine.reserve(q, 1)).jobs; // active a (its retry is due at once)
    await engine.complete(q, { id: again!.id, lease: again!.lease.token }, 1); // completed a, active b
    expect(told).toEqual([
      { tag: q, events: ['added a', 'active a'], place: { epoch: T0, last: 0, numbered: true } },
      { tag: q, events: ['added b'], place: { epoch: T0, last: 2, numbered: true } },
      { tag: q, events: ['progress a'], place: { epoch: T0, last: 3, numbered: false } },
      { tag: q, events: ['retrying a'], place: { epoch: T0, last: 3, numbered: true } },
      { tag: q, events: ['active a'], place: { epoch: T0, last: 4, numbered: true } },
      // a's completion and, in the same call, b's lease.
      { tag: q, events: ['completed a', 'active b'], place: { epoch: T0, last: 5, numbered: true } },
    ]);
    expect(await metaEs(queueKeys(q).meta)).toBe(`${T0} 7`);
  });

  it('a partitioned queue: a sequence per partition, each in its own meta', async () => {
    env.clock.set(T0);
    const { engine, told } = recordingEngine();
    const q = await newQueue(engine, { partitions: 2 });
    await engine.wantEvents(q, T0 + HOUR);
    const groups = Array.from({ length: 8 }, (_, i) => `g${i}`);
    for (const group of groups) await engine.enqueueAndReserve(q, { id: `j-${group}`, group }, 0);
    const tags = partitionTags(q, 2);
    for (const tag of tags) {
      const mine = told.filter((call) => call.tag === tag);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.map((call) => call.place)).toEqual(mine.map((_, i) => ({ epoch: T0, last: i, numbered: true })));
      expect(await metaEs(queueKeys(tag).meta)).toBe(`${T0} ${mine.length}`);
    }
  });

  it('a queue deleted and made again starts a later sequence (its epoch), from 1', async () => {
    env.clock.set(T0);
    const { engine, told } = recordingEngine();
    const name = uniqueName('again');
    await newQueue(engine, {}, name);
    await engine.wantEvents(name, T0 + HOUR);
    await engine.enqueueAndReserve(name, { id: 'x', group: 'g' }, 0);
    await engine.deleteQueue(name);
    env.clock.advance(1000);
    await newQueue(engine, {}, name);
    await engine.wantEvents(name, T0 + HOUR);
    await engine.enqueueAndReserve(name, { id: 'y', group: 'g' }, 0);
    expect(told.map((call) => call.place)).toEqual([
      { epoch: T0, last: 0, numbered: true },
      { epoch: T0 + 1000, last: 0, numbered: true },
    ]);
  });

  it('a progress before any numbered event of its partition has no sequence yet (epoch 0)', async () => {
    env.clock.set(T0);
    const { engine, told } = recordingEngine();
    const q = await newQueue(engine);
    const [lease] = (await engine.enqueueAndReserve(q, { id: 'p', group: 'g' }, 1)).leased;
    await engine.wantEvents(q, T0 + HOUR);
    await engine.recordProgress(q, { id: 'p', lease: lease!.lease.token, progress: 1 });
    expect(told).toEqual([{ tag: q, events: ['progress p'], place: { epoch: 0, last: 0, numbered: false } }]);
    expect(await metaEs(queueKeys(q).meta)).toBeNull();
  });
});

describe('numbering costs no command', () => {
  /** The commands of each call of one job's life on a new queue, events wanted or not. */
  async function lifeOf(wanted: boolean) {
    env.clock.set(T0);
    const { engine } = recordingEngine();
    const q = await newQueue(engine);
    if (wanted) await engine.wantEvents(q, T0 + HOUR);
    const counts: Record<string, unknown> = {};
    let token = '';
    counts.enqueue = await countsOf(env.admin, async () => {
      token = (await engine.enqueueAndReserve(q, { id: 'a', group: 'g' }, 1)).leased[0]!.lease.token;
    });
    counts.progress = await countsOf(env.admin, () => engine.recordProgress(q, { id: 'a', lease: token, progress: 10 }));
    counts.second = await countsOf(env.admin, () => engine.recordProgress(q, { id: 'a', lease: token, progress: 20 }));
    counts.complete = await countsOf(env.admin, () => engine.complete(q, { id: 'a', lease: token }));
    counts.again = await countsOf(env.admin, () => engine.enqueueAndReserve(q, { id: 'b', group: 'g' }, 0));
    return { counts, es: await metaEs(queueKeys(q).meta) };
  }

  it('the same commands with and without events wanted; the number rides in the HSET of meta', async () => {
    const plain = await lifeOf(false);
    const wanted = await lifeOf(true);
    expect(plain.es).toBeNull();
    expect(wanted.es).toBe(`${T0} 4`); // added a, active a, completed a, added b
    // The completion keeps its job while events are wanted (script-events.test.ts counts that);
    // numbering adds nothing to any call.
    const { complete: _kept, ...rest } = wanted.counts;
    const { complete: _deleted, ...plainRest } = plain.counts;
    expect(rest).toEqual(plainRest);
  });
});
