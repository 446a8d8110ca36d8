// A rate limit in a form: "at most [max] starts per [period] ms", both empty for none. Used by
// the queue's flow control (rateLimit, groupRateLimit) and a group's own limits.
import { h } from './dom';
import { FormProblem, field, numberInput, readNumber } from './form-fields';
import type { RateLimit } from './flow-format';

export interface RateLimitField {
  readonly element: HTMLFieldSetElement;
  readonly max: HTMLInputElement;
  readonly periodMs: HTMLInputElement;
  /** The limit typed in; null when both numbers are empty. */
  read(): RateLimit | null;
  /** Shows `limit` (and makes it what the form's reset goes back to). */
  fill(limit: RateLimit | null): void;
}

export function rateLimitField(id: string, legend: string): RateLimitField {
  const max = numberInput(`${id}-max`, 1, 1_000_000);
  const periodMs = numberInput(`${id}-period`, 1000, 86_400_000);
  const element = h(
    'fieldset',
    { class: 'rate-limit', 'data-field': id },
    h('legend', {}, legend, h('span', { class: 'muted' }, ' (both empty: none)')),
    h('div', { class: 'field-pair' }, field(max, 'Starts at most'), field(periodMs, 'Per', '(ms)')),
  );
  return {
    element,
    max,
    periodMs,
    read() {
      const limit = { max: readNumber(max, `${legend}: starts at most`), periodMs: readNumber(periodMs, `${legend}: per`) };
      if (limit.max === undefined && limit.periodMs === undefined) return null;
      if (limit.max === undefined) throw new FormProblem(`${legend}: give the starts at most, or empty both fields for none.`, max);
      if (limit.periodMs === undefined) throw new FormProblem(`${legend}: give the period, or empty both fields for none.`, periodMs);
      return { max: limit.max, periodMs: limit.periodMs };
    },
    fill(limit) {
      for (const [input, value] of [[max, limit?.max], [periodMs, limit?.periodMs]] as const) {
        input.defaultValue = value === undefined ? '' : String(value);
        input.value = input.defaultValue;
      }
    },
  };
}
