// Two whole numbers in a fieldset that make one object of a config, both empty for none: a rate
// limit ("at most [max] starts per [period] ms") and a queue's batches ("up to [max] jobs, the
// head waiting up to [ms]"). Each input is reachable by its field's name, so a form maps the API's
// validation paths ("rateLimit.max") to it.
import { h } from './dom';
import { FormProblem, field, numberInput, readNumber } from './form-fields';

export interface PairPart<K extends string> {
  /** The object's field the input holds. */
  key: K;
  label: string;
  hint?: string;
  min: number;
  max: number;
  /** How "give the ..." names it when it is missing. */
  name: string;
  /** What it reads as when empty while the other is given; without it, it is needed. */
  empty?: number;
}

export type PairValue<A extends string, B extends string> = Record<A | B, number>;

export type NumberPair<A extends string, B extends string> = Record<A | B, HTMLInputElement> & {
  readonly element: HTMLFieldSetElement;
  /** The object typed in; null when both numbers are empty. */
  read(): PairValue<A, B> | null;
  /** Shows `value` (and makes it what the form's reset goes back to). */
  fill(value: PairValue<A, B> | null): void;
};

/** `id`: the fieldset's data-field and its inputs' prefix (`${id}-${suffix}`, suffixes given with the parts). */
export function numberPair<A extends string, B extends string>(
  id: string,
  legend: string,
  none: string,
  parts: [PairPart<A> & { suffix: string }, PairPart<B> & { suffix: string }],
): NumberPair<A, B> {
  const inputs = parts.map((part) => numberInput(`${id}-${part.suffix}`, part.min, part.max));
  const element = h(
    'fieldset',
    { class: 'number-pair', 'data-field': id },
    h('legend', {}, legend, h('span', { class: 'muted' }, ` (both empty: ${none})`)),
    h('div', { class: 'field-pair' }, ...parts.map((part, i) => field(inputs[i]!, part.label, part.hint))),
  );
  const read = (): PairValue<A, B> | null => {
    const typed = parts.map((part, i) => readNumber(inputs[i]!, `${legend}: ${part.label.toLowerCase()}`));
    if (typed.every((value) => value === undefined)) return null;
    const value: Record<string, number> = {};
    parts.forEach((part, i) => {
      const number = typed[i] ?? part.empty;
      if (number === undefined) throw new FormProblem(`${legend}: give the ${part.name}, or empty both fields for none.`, inputs[i]!);
      value[part.key] = number;
    });
    return value as PairValue<A, B>;
  };
  const fill = (value: PairValue<A, B> | null): void => {
    parts.forEach((part, i) => {
      const input = inputs[i]!;
      input.defaultValue = value === null ? '' : String(value[part.key]);
      input.value = input.defaultValue;
    });
  };
  return Object.assign({ element, read, fill }, Object.fromEntries(parts.map((part, i) => [part.key, inputs[i]!]))) as NumberPair<A, B>;
}
