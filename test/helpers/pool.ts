// Queue names for pool tests: rendezvous hashing (src/core/store/pool.ts) decides where a new
// queue lives, so a test that wants one on a given database picks a name that lands there.
import { rendezvous } from '../../src/core/store/pool';

/** The first `<prefix><n>` that rendezvous hashing puts on `database` of a pool of `size`. */
export function nameOn(prefix: string, database: number, size = 3): string {
  for (let i = 0; ; i++) if (rendezvous(`${prefix}${i}`, size) === database) return `${prefix}${i}`;
}
