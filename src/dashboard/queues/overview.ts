// The overview at the top of the first view: every queue in one table, worst first (the longest
// wait, by default), with its backlog, completion rate and trend, failures and how long its
// oldest ready job has waited; each name leads to the queue's own view. It is built once and
// redrawn at each refresh of the list (../app.ts: every few seconds while the tab is visible), so
// the order chosen and the keyboard focus stay put.
import { pausedBadge } from '../badges';
import { type Props, dataTable, h, render } from '../dom';
import { countOf, formatAge, formatCount, formatInstant } from '../format';
import { jobHref, queueHref } from '../links';
import { ORDERS, type Order, type QueueFigures, RATE_MINUTES, type Trend, sortFigures } from './overview-figures';

const TREND_GLYPHS: Record<Trend, string> = { rising: '▲', falling: '▼', steady: '▶' };

/** "0", "0.4", "2.5", "12", "1,340": a per-minute rate, one decimal below 10. */
function formatPerMinute(n: number): string {
  return n >= 10 ? formatCount(Math.round(n)) : String(+n.toFixed(1));
}

const small = (...text: (string | Node | null)[]) => h('span', { class: 'sub' }, ...text);

/** A cell whose content is one box: stacked on a phone, the label takes one column and it the other. */
const cell = (props: Props, ...children: (Node | string | null | false)[]) => h('td', props, h('div', { class: 'figure' }, ...children));

function queueCell(f: QueueFigures): HTMLElement {
  return cell(
    { 'data-label': 'Queue', 'data-cell': 'queue' },
    h('a', { class: 'queue-name', href: queueHref(f.name), 'data-focus-key': `overview:${f.name}` }, f.name),
    pausedBadge(f.paused),
  );
}

function backlogCell(f: QueueFigures): HTMLElement {
  return cell(
    { 'data-label': 'Backlog', 'data-cell': 'backlog', 'data-value': f.backlog },
    h('strong', {}, formatCount(f.backlog)),
    small(`${formatCount(f.waiting)} waiting · ${formatCount(f.delayed)} delayed · ${formatCount(f.active)} active`),
  );
}

function oldestCell(f: QueueFigures): HTMLElement {
  const props = { 'data-label': 'Oldest waiting', 'data-cell': 'oldest' };
  if (!f.oldest) return cell({ ...props, 'data-value': '' }, h('span', { class: 'muted' }, 'none ready'));
  const { id, orderMs, waitedMs } = f.oldest;
  return cell(
    { ...props, 'data-value': waitedMs, class: waitedMs >= 60_000 ? 'waiting-long' : '' },
    h('a', { href: jobHref(f.name, id), 'data-focus-key': `overview:${f.name}:oldest`, title: `Job ${id}` }, h('strong', {}, formatAge(waitedMs))),
    small(`since ${formatInstant(orderMs)}`),
  );
}

function rateCell(f: QueueFigures): HTMLElement {
  const props = { 'data-label': 'Completed per minute', 'data-cell': 'rate' };
  if (!f.rate) return cell({ ...props, 'data-value': '' }, h('span', { class: 'muted', title: f.metricsError ?? '' }, 'unavailable'));
  const { perMinute, before, trend, thisMinute } = f.rate;
  return cell(
    { ...props, 'data-value': perMinute },
    h('strong', {}, formatPerMinute(perMinute)),
    trend && h('span', { class: `trend trend-${trend}`, 'data-trend': trend, title: `${formatPerMinute(before)}/min in the ${RATE_MINUTES} minutes before` }, ` ${TREND_GLYPHS[trend]} ${trend}`),
    small(`${formatCount(thisMinute)} this minute`),
  );
}

function failuresCell(f: QueueFigures): HTMLElement {
  const props = { 'data-label': 'Failed (1 h)', 'data-cell': 'failures' };
  if (!f.failures) return cell({ ...props, 'data-value': '' }, h('span', { class: 'muted', title: f.metricsError ?? '' }, 'unavailable'));
  const { hour, recent, retried } = f.failures;
  return cell(
    { ...props, 'data-value': hour, class: recent > 0 ? 'failing' : '' },
    h('strong', {}, formatCount(hour)),
    small(`${formatCount(recent)} in ${RATE_MINUTES} min · ${formatCount(retried)} retried`),
  );
}

function summaryOf(all: QueueFigures[]): string {
  const backlog = all.reduce((n, f) => n + f.backlog, 0);
  const failed = all.reduce((n, f) => n + (f.failures?.hour ?? 0), 0);
  const parts = [countOf(all.length, 'queue'), `${countOf(backlog, 'job')} not finished`, `${formatCount(failed)} failed in the last hour`];
  const longest = sortFigures(all, 'waited')[0];
  if (longest?.oldest) parts.push(`longest wait ${formatAge(longest.oldest.waitedMs)} (${longest.name})`);
  return parts.join(' · ');
}

export class Overview {
  readonly element: HTMLElement;
  private order: Order = 'waited';
  private figures: QueueFigures[] = [];
  private readonly summary = h('p', { class: 'overview-summary', 'data-overview': 'summary' });
  private readonly table = h('div', { class: 'overview-table' });

  constructor() {
    const select = h(
      'select',
      { id: 'overview-order', 'data-focus-key': 'overview:order', onchange: (e: Event) => this.reorder((e.currentTarget as HTMLSelectElement).value as Order) },
      ...Object.entries(ORDERS).map(([value, label]) => h('option', { value }, label)),
    );
    this.element = h(
      'section',
      { class: 'card overview-card', 'aria-labelledby': 'queues-overview-heading', 'data-overview': 'queues' },
      h(
        'div',
        { class: 'overview-head' },
        h('h2', { id: 'queues-overview-heading' }, 'Overview'),
        h('div', { class: 'overview-order' }, h('label', { for: 'overview-order' }, 'Order'), select),
      ),
      this.summary,
      this.table,
      h(
        'p',
        { class: 'hint' },
        `Backlog: jobs not finished. Oldest waiting: how long the oldest job that could start now has waited, since its orderMs (its enqueue, unless its producer set one); a job behind its group's running job, in a held or paused group, or delayed is not counted. Completed/min: the average of the last ${RATE_MINUTES} whole minutes, its trend against the ${RATE_MINUTES} before. Failed: jobs that failed for good.`,
      ),
    );
  }

  show(figures: QueueFigures[]): void {
    this.figures = figures;
    this.draw();
  }

  private reorder(order: Order): void {
    this.order = order;
    this.draw();
  }

  private draw(): void {
    render(this.summary, summaryOf(this.figures));
    const rows = sortFigures(this.figures, this.order).map((f) =>
      h('tr', { 'data-queue': f.name }, queueCell(f), backlogCell(f), oldestCell(f), rateCell(f), failuresCell(f)),
    );
    render(
      this.table,
      dataTable('stack overview', `Every queue, ${ORDERS[this.order].toLowerCase()}`, ['Queue', 'Backlog', 'Oldest waiting', 'Completed/min', 'Failed (1 h)'], rows),
    );
  }
}
