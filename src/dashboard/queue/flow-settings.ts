// A queue's flow control, editable: jobs of one group in flight at once (groupConcurrency), the
// queue's and each group's rate limit, the dedup window, what an endpoint's 429 holds
// (backpressure) and ordered batches (batch). Saving PATCHes these six fields alone: the rest of
// the config, publish tokens and signing secrets included, is kept as it is. The form is built once; a refresh fills it
// only while the user has not changed it (Reset goes back to what was filled), so typing is
// never overwritten.
import type { QueueConfig, QueueConfigInput, QueueConfigPatch } from '../../client';
import type { QueueContext } from '../actions';
import { h, render } from '../dom';
import { BACKPRESSURE_LABELS, type Backpressure } from '../flow-format';
import { clearFormError, field, numberInput, readNumber, showFormError } from '../form-fields';
import { rateLimitField } from '../rate-limit-field';
import { isAuthFailure } from '../session';
import { announce } from '../status';
import { batchField } from './batch-field';

type FlowConfig = Pick<QueueConfigInput, 'groupConcurrency' | 'rateLimit' | 'groupRateLimit' | 'dedupWindowMs' | 'backpressure' | 'batch'>;

export class FlowSettings {
  readonly element: HTMLElement;
  private readonly groupConcurrency = numberInput('flow-group-concurrency', 1, 1000);
  private readonly rateLimit = rateLimitField('flow-rate-limit', 'Rate limit, queue-wide');
  private readonly groupRateLimit = rateLimitField('flow-group-rate-limit', 'Rate limit per group');
  private readonly dedupWindowMs = numberInput('flow-dedup-window', 0, 604_800_000);
  private readonly batch = batchField('flow-batch');
  private readonly backpressure = h(
    'select',
    { id: 'flow-backpressure', name: 'backpressure' },
    ...Object.entries(BACKPRESSURE_LABELS).map(([mode, label]) => h('option', { value: mode }, `${mode}: ${label}`)),
  );
  private readonly fields = h('fieldset', { class: 'flow-fields' });
  private readonly error = h('div', { id: 'flow-error', class: 'form-error', role: 'alert' });
  private readonly submit = h('button', { type: 'submit', class: 'primary' }, 'Save flow control');
  /** Changed by the user since it was last filled. */
  private edited = false;

  constructor(private readonly ctx: QueueContext) {
    render(
      this.fields,
      h('legend', { class: 'visually-hidden' }, 'Flow control settings'),
      h(
        'div',
        { class: 'field-pair' },
        field(this.groupConcurrency, 'Group concurrency', '(1-1000)'),
        field(this.dedupWindowMs, 'Dedup window', '(ms)'),
        field(this.backpressure, 'An endpoint\'s 429'),
      ),
      h('div', { class: 'field-pair' }, this.rateLimit.element, this.groupRateLimit.element),
      this.batch.element,
      this.error,
      h('div', { class: 'form-row' }, this.submit, h('button', { type: 'reset' }, 'Reset')),
    );
    const form = h(
      'form',
      { class: 'flow-form', 'aria-labelledby': 'flow-heading', 'aria-describedby': 'flow-error', novalidate: true },
      h('h2', { id: 'flow-heading' }, 'Flow control'),
      h('p', { class: 'muted hint' }, 'Jobs of one group in flight at once, rate limits on starts, how long a job id stays known after its job ends, what a 429 from the endpoint holds until its Retry-After, and how many of a group\'s jobs one delivery carries.'),
      this.fields,
    );
    form.addEventListener('input', () => (this.edited = true));
    form.addEventListener('reset', () => {
      this.edited = false;
      clearFormError(this.error, this.inputs());
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      if (this.submit.getAttribute('aria-disabled') !== 'true') void this.save();
    });
    this.element = h('section', { class: 'card' }, form);
  }

  /**
   * The queue's config as the last refresh read it; not while the user edits the form, or has a
   * field of it under the cursor (a refresh landing between a field's focus and its first key
   * would move the caret, and a typed 4 would join the old 1).
   */
  show(config: QueueConfig): void {
    const active = document.activeElement;
    if (this.edited || (active && this.element.contains(active) && active.matches('input, select'))) return;
    this.groupConcurrency.defaultValue = String(config.groupConcurrency);
    this.dedupWindowMs.defaultValue = String(config.dedupWindowMs);
    for (const option of this.backpressure.options) option.defaultSelected = option.value === config.backpressure;
    this.rateLimit.fill(config.rateLimit);
    this.groupRateLimit.fill(config.groupRateLimit);
    this.batch.fill(config.batch);
    this.groupConcurrency.value = this.groupConcurrency.defaultValue;
    this.dedupWindowMs.value = this.dedupWindowMs.defaultValue;
    this.backpressure.value = config.backpressure;
  }

  /** The inputs by the config field they hold, for the API's validation details. */
  private inputs(): Record<string, HTMLElement> {
    return {
      groupConcurrency: this.groupConcurrency,
      'rateLimit.max': this.rateLimit.max,
      'rateLimit.periodMs': this.rateLimit.periodMs,
      'groupRateLimit.max': this.groupRateLimit.max,
      'groupRateLimit.periodMs': this.groupRateLimit.periodMs,
      dedupWindowMs: this.dedupWindowMs,
      backpressure: this.backpressure,
      'batch.maxSize': this.batch.maxSize,
      'batch.maxWaitMs': this.batch.maxWaitMs,
    };
  }

  /** What the form holds; an empty number is undefined: the field takes its default. */
  private read(): FlowConfig {
    return {
      groupConcurrency: readNumber(this.groupConcurrency, 'Group concurrency'),
      rateLimit: this.rateLimit.read(),
      groupRateLimit: this.groupRateLimit.read(),
      dedupWindowMs: readNumber(this.dedupWindowMs, 'Dedup window'),
      backpressure: this.backpressure.value as Backpressure,
      batch: this.batch.read(),
    };
  }

  private async save(): Promise<void> {
    const { queue } = this.ctx;
    clearFormError(this.error, this.inputs());
    this.submit.setAttribute('aria-disabled', 'true');
    try {
      // An empty number is null in the patch: back to its default, as the form says.
      const patch: QueueConfigPatch = Object.fromEntries(Object.entries(this.read()).map(([field, value]) => [field, value ?? null]));
      const saved = await queue.update(patch);
      this.edited = false;
      this.show(saved.config);
      // Said once the view shows what was saved.
      await this.ctx.refresh();
      announce(`Flow control of queue ${queue.name} saved.`);
    } catch (error) {
      if (isAuthFailure(error)) this.ctx.fail(error);
      else showFormError(this.error, error, this.inputs());
    } finally {
      this.submit.removeAttribute('aria-disabled');
    }
  }
}
