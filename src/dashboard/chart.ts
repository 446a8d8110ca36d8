// The per-minute chart of one queue's last hour: stacked bars of completed, retried and failed
// jobs as inline SVG (no library, no external load), a caption with the totals, and the same
// numbers as a table for screen readers and for anyone who wants exact figures.
import type { MinuteMetrics } from '../client';
import { h, svg } from './dom';
import { formatCount, formatInstant } from './format';

const SERIES = [
  { key: 'completed', label: 'Completed' },
  { key: 'retried', label: 'Retried' },
  { key: 'failed', label: 'Failed' },
] as const;

// The SVG's own coordinate space; CSS stretches it to the box (bars are rectangles, so the
// stretch costs nothing). Axis text lives in HTML below it, where it does not stretch.
const WIDTH = 600;
const HEIGHT = 100;
const SLOT = WIDTH / 60;
const BAR = SLOT - 2;

/**
 * The top of the y axis, which the label names: the busiest minute itself up to 5 (its bar
 * reaches the label: bars of 2 under `2/min`), above that 1, 2 or 5 times a power of ten at
 * least the busiest minute. An idle hour gets 1.
 */
function niceMax(value: number): number {
  if (value <= 5) return Math.max(1, Math.ceil(value));
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function total(m: MinuteMetrics): number {
  return m.completed + m.retried + m.failed;
}

function describeMinute(m: MinuteMetrics): string {
  return `${formatInstant(m.at)}: ${m.completed} completed, ${m.retried} retried, ${m.failed} failed`;
}

function bars(minutes: MinuteMetrics[], top: number): SVGGElement {
  const group = svg('g', { 'aria-hidden': 'true' });
  const scale = HEIGHT / top;
  minutes.forEach((m, i) => {
    const slot = svg('g', { class: 'minute' }, svg('title', {}, describeMinute(m)));
    // A full-height hit area, so hovering an empty minute still shows its tooltip.
    slot.append(svg('rect', { class: 'hit', x: i * SLOT, y: 0, width: SLOT, height: HEIGHT }));
    let y = HEIGHT;
    for (const { key } of SERIES) {
      const height = m[key] * scale;
      if (height <= 0) continue;
      y -= height;
      slot.append(svg('rect', { class: `bar ${key}`, x: i * SLOT + 1, y, width: BAR, height }));
    }
    group.append(slot);
  });
  return group;
}

function gridLines(): SVGGElement {
  const group = svg('g', { class: 'grid', 'aria-hidden': 'true' });
  for (const fraction of [0, 0.5, 1]) {
    const y = HEIGHT * fraction;
    group.append(svg('line', { x1: 0, x2: WIDTH, y1: y, y2: y, 'vector-effect': 'non-scaling-stroke' }));
  }
  return group;
}

function table(minutes: MinuteMetrics[]): HTMLElement {
  const busy = minutes.filter((m) => total(m) > 0);
  if (busy.length === 0) return h('p', { class: 'muted' }, 'No job finished, failed or was retried in the last hour.');
  return h(
    'div',
    { class: 'table-box' },
    h(
      'table',
      { class: 'compact' },
      h('caption', { class: 'visually-hidden' }, 'Jobs per minute, minutes with activity only'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Minute'), ...SERIES.map((s) => h('th', { scope: 'col' }, s.label)))),
      h(
        'tbody',
        {},
        ...busy.map((m) => h('tr', {}, h('th', { scope: 'row' }, formatInstant(m.at)), ...SERIES.map((s) => h('td', {}, formatCount(m[s.key]))))),
      ),
    ),
  );
}

/**
 * The chart, its totals and its table; `idPrefix` keeps ids unique when several queues show.
 * `stateKey` names the chart across redraws, so render() keeps its table open and its toggle
 * focused.
 */
export function throughputChart(minutes: MinuteMetrics[], idPrefix: string, stateKey: string): HTMLElement {
  const sums = { completed: 0, retried: 0, failed: 0 };
  for (const m of minutes) for (const { key } of SERIES) sums[key] += m[key];
  const top = niceMax(Math.max(0, ...minutes.map(total)));
  const summary = `Last hour: ${formatCount(sums.completed)} completed, ${formatCount(sums.retried)} retried, ${formatCount(sums.failed)} failed.`;
  const titleId = `${idPrefix}-chart-title`;

  return h(
    'figure',
    { class: 'chart' },
    h(
      'div',
      { class: 'chart-plot' },
      h('span', { class: 'axis-top', 'aria-hidden': 'true' }, `${top}/min`),
      svg(
        'svg',
        { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img', 'aria-labelledby': titleId, focusable: 'false' },
        svg('title', { id: titleId }, `Jobs per minute over the last hour. ${summary}`),
        gridLines(),
        bars(minutes, top),
      ),
    ),
    h(
      'div',
      { class: 'axis-x', 'aria-hidden': 'true' },
      h('span', {}, '60 min ago'),
      h('span', {}, 'now'),
    ),
    h(
      'figcaption',
      {},
      h(
        'ul',
        { class: 'legend' },
        h('li', {}, 'Last hour:'),
        ...SERIES.map((s) => h('li', {}, h('span', { class: `swatch ${s.key}`, 'aria-hidden': 'true' }), `${s.label} `, h('strong', {}, formatCount(sums[s.key])))),
      ),
    ),
    h(
      'details',
      { class: 'chart-table', 'data-open-key': `chart:${stateKey}` },
      h('summary', { 'data-focus-key': `chart:${stateKey}` }, 'Per-minute table'),
      table(minutes),
    ),
  );
}

/** In place of the chart when the metrics could not be read. */
export function chartUnavailable(reason: string): HTMLElement {
  return h('p', { class: 'muted chart-missing' }, `Throughput chart unavailable: ${reason}`);
}
