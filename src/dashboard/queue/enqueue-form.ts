// "Enqueue a test job": a group, data as JSON and an optional delay, sent with the admin token
// like any producer's job. The JSON is checked here first, so a typo never reaches the API; what
// the API refuses shows next to the form. The new job's id links to its own view.
import type { QueueContext } from '../actions';
import { h, render } from '../dom';
import { field } from '../form-fields';
import { jobHref } from '../links';
import { describeError, isAuthFailure } from '../session';
import { announce } from '../status';

export function enqueueForm(ctx: QueueContext): HTMLElement {
  const group = h('input', { id: 'enqueue-group', name: 'group', required: true, autocomplete: 'off', spellcheck: 'false' });
  const data = h('textarea', { id: 'enqueue-data', name: 'data', rows: 3, spellcheck: 'false' }, '{}');
  const delay = h('input', { id: 'enqueue-delay', name: 'delay', type: 'number', min: 0, step: 1, inputmode: 'numeric' });
  const error = h('p', { id: 'enqueue-error', class: 'form-error', role: 'alert' });
  const done = h('p', { class: 'form-done', 'data-enqueued': '' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Enqueue');
  const form = h(
    'form',
    { class: 'enqueue-form', 'aria-labelledby': 'enqueue-heading', novalidate: true },
    h('h2', { id: 'enqueue-heading' }, 'Enqueue a test job'),
    h('div', { class: 'field-pair' }, field(group, 'Group'), field(delay, 'Delay', '(ms, optional)')),
    field(data, 'Data', '(JSON)'),
    error,
    submit,
    done,
  );

  const refuse = (message: string, input: HTMLElement) => {
    error.textContent = message;
    input.focus();
  };

  async function send(): Promise<void> {
    if (group.value === '') return refuse('Enter a group.', group);
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.value);
    } catch (e) {
      return refuse(`Data is not JSON: ${(e as Error).message}`, data);
    }
    const delayMs = delay.value === '' ? undefined : Number(delay.value);
    if (delayMs !== undefined && !(Number.isInteger(delayMs) && delayMs >= 0)) return refuse('The delay is a whole number of ms, 0 or more.', delay);
    error.textContent = '';
    submit.setAttribute('aria-disabled', 'true');
    try {
      const result = await ctx.queue.add({ group: group.value, data: parsed, ...(delayMs === undefined ? {} : { delayMs }) });
      render(done, 'Enqueued job ', h('a', { href: jobHref(ctx.queue.name, result.id), 'data-job-link': result.id }, h('code', {}, result.id)), ` (${result.state}).`);
      announce(`Job ${result.id} enqueued (${result.state}).`);
      await ctx.refresh();
    } catch (e) {
      if (isAuthFailure(e)) ctx.fail(e);
      else error.textContent = describeError(e);
    } finally {
      submit.removeAttribute('aria-disabled');
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (submit.getAttribute('aria-disabled') !== 'true') void send();
  });
  return h('section', { class: 'card' }, form);
}
