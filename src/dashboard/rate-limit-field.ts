// A rate limit in a form: "at most [max] starts per [period] ms", both empty for none. Used by
// the queue's flow control (rateLimit, groupRateLimit) and a group's own limits.
import { type NumberPair, numberPair } from './number-pair';

export type RateLimitField = NumberPair<'max', 'periodMs'>;

export function rateLimitField(id: string, legend: string): RateLimitField {
  return numberPair(id, legend, 'none', [
    { key: 'max', suffix: 'max', label: 'Starts at most', name: 'starts at most', min: 1, max: 1_000_000 },
    { key: 'periodMs', suffix: 'period', label: 'Per', hint: '(ms)', name: 'period', min: 1000, max: 86_400_000 },
  ]);
}
