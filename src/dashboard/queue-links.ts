// What every view that names a queue shows of it: the link to its own view and the badge of a
// paused queue.
import { h } from './dom';

export function queueHref(name: string): string {
  return `#/queue/${encodeURIComponent(name)}`;
}

export function pausedBadge(paused: boolean): HTMLElement | null {
  return paused ? h('span', { class: 'badge badge-paused' }, 'Paused') : null;
}
