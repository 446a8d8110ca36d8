// Badges: a state in a word (a job's, a group's, an attempt's outcome, a callback's delivery),
// styled by its class badge-<state>, and the mark of a paused queue.
import { h } from './dom';

export function stateBadge(state: string): HTMLElement {
  return h('span', { class: `badge badge-${state}` }, state);
}

export function pausedBadge(paused: boolean): HTMLElement | null {
  return paused ? h('span', { class: 'badge badge-paused' }, 'Paused') : null;
}
