// A group's own limits, set at runtime (PUT /v1/queues/{queue}/groups/{group}/limits): its
// concurrency, and its rate limit (the queue's groupRateLimit, none at all, or one of its own).
// "Clear limits" deletes them (DELETE, 204): the queue's defaults apply again. The next start
// obeys them. The form is built once; a refresh fills it only while the user has not changed it.
import type { GroupLimits } from '../../client';
import type { QueueContext } from '../actions';
import { h, render } from '../dom';
import { type RateLimit, formatRate } from '../flow-format';
import { FormProblem, clearFormError, field, numberInput, readNumber, showFormError } from '../form-fields';
import { rateLimitField } from '../rate-limit-field';
import { isAuthFailure } from '../session';
import { announce } from '../status';

type RateChoice = 'queue' | 'none' | 'own';

export class GroupLimitsForm {
  readonly element: HTMLElement;
  private readonly concurrency = numberInput('limits-concurrency', 1, 1000);
  private readonly rateChoice = h('select', { id: 'limits-rate-choice', name: 'rate' });
  private readonly rate = rateLimitField('limits-rate', 'Its own rate limit');
  private readonly error = h('div', { id: 'limits-error', class: 'form-error', role: 'alert' });
  private readonly submit = h('button', { type: 'submit', class: 'primary' }, 'Save limits');
  private readonly clear = h('button', { type: 'button', 'data-action': 'clear-limits' }, 'Clear limits');
  private edited = false;

  constructor(
    private readonly ctx: QueueContext,
    private readonly group: string,
  ) {
    const form = h(
      'form',
      { class: 'limits-form', 'aria-labelledby': 'limits-heading', 'aria-describedby': 'limits-error', novalidate: true },
      h('h2', { id: 'limits-heading' }, 'Limits of this group'),
      h('p', { class: 'muted hint' }, 'They replace the queue\'s group concurrency and group rate limit for this group, from its next start. Clear them to go back to the queue\'s.'),
      h('div', { class: 'field-pair' }, field(this.concurrency, 'Concurrency', '(1-1000; empty: the queue\'s)'), field(this.rateChoice, 'Rate limit')),
      this.rate.element,
      this.error,
      h('div', { class: 'form-row' }, this.submit, this.clear, h('button', { type: 'reset' }, 'Reset')),
    );
    this.rateChoice.addEventListener('change', () => this.showRateFields());
    form.addEventListener('input', () => (this.edited = true));
    form.addEventListener('reset', () => {
      this.edited = false;
      clearFormError(this.error, this.inputs());
      // The fields are reset after this event: show those of the select's default choice then.
      window.setTimeout(() => this.showRateFields());
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send(this.submit, () => this.read(), 'saved');
    });
    this.clear.addEventListener('click', () => void this.send(this.clear, () => null, 'cleared'));
    this.element = h('section', { class: 'card' }, form);
  }

  /** Fills the form from the group's `limits` (null: none), with the queue's defaults named in the choices. */
  show(limits: GroupLimits | null, queueDefault: { concurrency: number; rateLimit: RateLimit | null }): void {
    this.concurrency.placeholder = String(queueDefault.concurrency);
    const choice: RateChoice = limits?.rateLimit === undefined ? 'queue' : limits.rateLimit === null ? 'none' : 'own';
    const choices: [RateChoice, string][] = [
      ['queue', `The queue's (${formatRate(queueDefault.rateLimit)})`],
      ['none', 'None'],
      ['own', 'Its own'],
    ];
    if (this.edited) {
      // Keep what the user chose; only the queue's default in its label may have changed.
      this.rateChoice.options[0]!.text = choices[0]![1];
      return;
    }
    render(this.rateChoice, ...choices.map(([value, label]) => h('option', { value, selected: value === choice }, label)));
    this.concurrency.defaultValue = limits?.concurrency === undefined ? '' : String(limits.concurrency);
    this.concurrency.value = this.concurrency.defaultValue;
    this.rate.fill(limits?.rateLimit ?? null);
    this.showRateFields();
  }

  private showRateFields(): void {
    this.rate.element.hidden = this.rateChoice.value !== 'own';
  }

  private inputs(): Record<string, HTMLElement> {
    return { concurrency: this.concurrency, 'rateLimit.max': this.rate.max, 'rateLimit.periodMs': this.rate.periodMs, rateLimit: this.rateChoice };
  }

  /** The limits to PUT: only what the form sets (the API refuses an empty set). */
  private read(): GroupLimits {
    const limits: GroupLimits = {};
    const concurrency = readNumber(this.concurrency, 'Concurrency');
    if (concurrency !== undefined) limits.concurrency = concurrency;
    const choice = this.rateChoice.value as RateChoice;
    if (choice === 'none') limits.rateLimit = null;
    if (choice === 'own') {
      const own = this.rate.read();
      if (own === null) throw new FormProblem('Its own rate limit: give the starts at most and the period.', this.rate.max);
      limits.rateLimit = own;
    }
    return limits;
  }

  /** PUTs what `limits` reads, or DELETEs when it answers null. */
  private async send(button: HTMLButtonElement, limits: () => GroupLimits | null, done: string): Promise<void> {
    if (button.getAttribute('aria-disabled') === 'true') return;
    const { queue } = this.ctx;
    clearFormError(this.error, this.inputs());
    button.setAttribute('aria-disabled', 'true');
    try {
      const set = limits();
      if (set === null) await queue.clearGroupLimits(this.group);
      else await queue.setGroupLimits(this.group, set);
      this.edited = false;
      // Said once the view shows the new limits.
      await this.ctx.refresh();
      announce(`Limits of group ${this.group} ${done}.`);
    } catch (error) {
      if (isAuthFailure(error)) this.ctx.fail(error);
      else showFormError(this.error, error, this.inputs());
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }
}
