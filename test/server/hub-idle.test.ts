// The Node server's hubs are dropped once unused past the retention, so a server that saw many
// queues (deleted since, or gone quiet) keeps no hub for them; a hub with a stream open stays. A
// dropped hub that is asked again starts empty, as after a restart: a resume from an id it gave
// is told it missed some (a gap first), never silently.
import { afterEach, expect, it } from 'vitest';
import type { Hello } from '../../src/core/events/wire';
import type { HubSocket } from '../../src/core/events/hubs';
import { type Hubs, createHubs } from '../../src/server/hub';
import { sleep } from '../delivery/support';
import { jobEvent } from '../helpers/hub-events';

const IDLE_MS = 50;
let hubs: Hubs | undefined;
afterEach(() => hubs?.close());

/** The hello of a stream attached with `since`. */
async function hello(socket: HubSocket): Promise<Hello> {
  return new Promise((resolve) => socket.addEventListener('message', ({ data }) => resolve(JSON.parse(data as string) as Hello)));
}

it('drops a hub nobody used past the idle time: a resume from its id is then told it missed some', async () => {
  hubs = createHubs({ idleMs: IDLE_MS });
  await hubs.hub('q').publish([jobEvent('q', 'a', 'g')]);
  const { head } = await hubs.hub('q').snapshot({});
  const kept = await hello(await hubs.hub('q').subscribe({}, head));
  expect(kept).toMatchObject({ head, missed: false });
  // The stream above holds the hub: it stays while it is open, however long.
  await sleep(IDLE_MS * 4);
  expect((await hubs.hub('q').snapshot({}, head)).missed).toBe(false);

  hubs.close();
  hubs = createHubs({ idleMs: IDLE_MS });
  await hubs.hub('q').publish([jobEvent('q', 'a', 'g')]);
  const gone = (await hubs.hub('q').snapshot({})).head;
  await sleep(IDLE_MS * 4);
  expect(await hello(await hubs.hub('q').subscribe({}, gone))).toMatchObject({ missed: true });
});
