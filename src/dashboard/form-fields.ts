// What the dashboard's forms share: a labelled field, reading a number field, and showing why a
// form was refused next to it: a value that is not a number (caught here), or the API's 400
// VALIDATION_FAILED, whose details name the fields (`{path, message}`): each named field is marked
// invalid and the first one gets the focus.
import { GroupqError } from '../client';
import { h, render } from './dom';
import { describeError } from './session';

export function field(input: HTMLElement, label: string, hint = ''): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: input.id }, label, hint ? h('span', { class: 'muted' }, ` ${hint}`) : null), input);
}

export function numberInput(id: string, min: number, max: number): HTMLInputElement {
  return h('input', { id, name: id, type: 'number', min, max, step: 1, inputmode: 'numeric', autocomplete: 'off' });
}

/** A value the form refuses before sending anything. */
export class FormProblem extends Error {
  constructor(
    message: string,
    readonly input: HTMLElement,
  ) {
    super(message);
  }
}

/** The number typed into `input`; undefined when it is empty. */
export function readNumber(input: HTMLInputElement, label: string): number | undefined {
  if (input.validity.badInput) throw new FormProblem(`${label} is not a number.`, input);
  return input.value === '' ? undefined : Number(input.value);
}

interface Detail {
  path: string;
  message: string;
}

function detailsOf(error: GroupqError): Detail[] {
  if (!Array.isArray(error.details)) return [];
  return error.details.filter((d): d is Detail => typeof d?.path === 'string' && typeof d?.message === 'string');
}

/** Clears what `showFormError` marked. */
export function clearFormError(box: HTMLElement, inputs: Record<string, HTMLElement>): void {
  box.replaceChildren();
  for (const input of Object.values(inputs)) input.removeAttribute('aria-invalid');
}

/**
 * Shows `error` in `box` (a role="alert" element next to the form). `inputs` maps the API's field
 * paths ("rateLimit.max") to the inputs that hold them; a detail about "rateLimit" marks all of
 * that object's inputs.
 */
export function showFormError(box: HTMLElement, error: unknown, inputs: Record<string, HTMLElement>): void {
  clearFormError(box, inputs);
  const marked: HTMLElement[] = [];
  const mark = (input: HTMLElement) => {
    input.setAttribute('aria-invalid', 'true');
    marked.push(input);
  };
  if (error instanceof FormProblem) {
    render(box, error.message);
    mark(error.input);
  } else if (error instanceof GroupqError && error.code === 'VALIDATION_FAILED') {
    const details = detailsOf(error);
    render(
      box,
      h('p', {}, describeError(error)),
      details.length > 1 ? h('ul', {}, ...details.map((d) => h('li', { 'data-path': d.path }, `${d.path || 'body'}: ${d.message}`))) : null,
    );
    for (const { path } of details) {
      for (const [name, input] of Object.entries(inputs)) if (name === path || name.startsWith(`${path}.`)) mark(input);
    }
  } else {
    render(box, describeError(error));
  }
  marked[0]?.focus();
}
