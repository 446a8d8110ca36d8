// A queue's ordered batches in its flow control form: "up to [max] jobs of a group per delivery,
// its head waiting up to [ms] for them", both empty for one job per delivery. An empty wait is 0,
// sent as such: PATCH merges an object field, so leaving it out would keep the old wait.
import { type NumberPair, numberPair } from '../number-pair';

export type BatchField = NumberPair<'maxSize', 'maxWaitMs'>;

/** The bounds are the config's (MAX_BATCH_JOBS, MAX_BATCH_WAIT_MS); the API checks them again. */
export function batchField(id: string): BatchField {
  return numberPair(id, 'Batches', 'one job per delivery', [
    { key: 'maxSize', suffix: 'max', label: 'Jobs at most', hint: '(1-100)', name: 'jobs at most', min: 1, max: 100 },
    { key: 'maxWaitMs', suffix: 'wait', label: 'Head waits up to', hint: '(ms)', name: 'wait', min: 0, max: 300_000, empty: 0 },
  ]);
}
