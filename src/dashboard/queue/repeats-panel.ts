// A queue's repeatable jobs: key, group, schedule (every N or a cron pattern), time zone, the
// next run and how many runs were created (of the limit, if any), and Delete (asks first; runs
// already enqueued stay). Repeats are created through the API.
import type { Repeat } from '../../client';
import { type QueueContext, act } from '../actions';
import { Confirmer } from '../confirm';
import { dataTable, h, render } from '../dom';
import { formatCount, formatDuration, formatWhen } from '../format';

function schedule(repeat: Repeat): HTMLElement | string {
  if (repeat.every !== undefined) return `every ${formatDuration(repeat.every)}`;
  return h('code', {}, repeat.pattern ?? '?');
}

export class RepeatsPanel {
  readonly element: HTMLElement;
  private readonly body = h('div', { class: 'panel-body', tabindex: '-1' });
  private readonly confirmer = new Confirmer(() => this.draw());
  private repeats: Repeat[] = [];

  constructor(private readonly ctx: QueueContext) {
    this.element = h('section', { class: 'card', 'aria-labelledby': 'repeats-heading' }, h('h2', { id: 'repeats-heading' }, 'Repeatable jobs'), this.body);
  }

  show(repeats: Repeat[]): void {
    this.repeats = repeats;
    this.draw();
  }

  private draw(): void {
    const { repeats } = this;
    if (repeats.length === 0) {
      render(this.body, h('p', { class: 'muted empty-row' }, 'No repeatable jobs.'));
      return;
    }
    const sorted = [...repeats].sort((a, b) => (a.nextRunAt ?? Infinity) - (b.nextRunAt ?? Infinity));
    render(
      this.body,
      dataTable(
        'stack repeats-table',
        'Repeatable jobs',
        ['Key', 'Group', 'Schedule', 'Time zone', 'Next run', 'Runs', 'Actions'],
        sorted.map((repeat) =>
          h(
            'tr',
            { 'data-repeat': repeat.key },
            h('td', { 'data-label': 'Key' }, h('code', { class: 'id' }, repeat.key)),
            h('td', { 'data-label': 'Group' }, h('span', { class: 'group-name' }, repeat.group)),
            h('td', { 'data-label': 'Schedule' }, schedule(repeat)),
            h('td', { 'data-label': 'Time zone' }, repeat.tz),
            h('td', { 'data-label': 'Next run' }, repeat.nextRunAt === null ? h('span', { class: 'muted' }, 'ended') : formatWhen(repeat.nextRunAt)),
            h('td', { 'data-label': 'Runs' }, repeat.limit === undefined ? formatCount(repeat.count) : `${formatCount(repeat.count)} of ${formatCount(repeat.limit)}`),
            h('td', { 'data-label': 'Actions', class: 'actions' }, this.deleteControl(repeat.key)),
          ),
        ),
      ),
    );
  }

  private deleteControl(key: string): HTMLElement {
    const { queue } = this.ctx;
    return this.confirmer.control({
      key: `repeat:${key}`,
      action: 'delete-repeat',
      label: 'Delete',
      ariaLabel: `Delete repeatable job ${key}`,
      question: `Stop repeatable job ${key}? Runs already enqueued stay.`,
      confirmLabel: 'Delete repeat',
      small: true,
      run: (button) => act(this.ctx, button, async () => (await queue.repeats.delete(key), `Repeatable job ${key} deleted.`)),
    });
  }
}
