// Links between the views: the hash of each route that app.ts's router reads (#/queue/<name>, and
// a job's or a group's under it, each part percent-encoded), and the link to a group's view that
// the jobs tables, the groups list and a job's view show.
import { h } from './dom';

export function queueHref(name: string): string {
  return `#/queue/${encodeURIComponent(name)}`;
}

export function jobHref(queue: string, id: string): string {
  return `${queueHref(queue)}/job/${encodeURIComponent(id)}`;
}

function groupHref(queue: string, group: string): string {
  return `${queueHref(queue)}/group/${encodeURIComponent(group)}`;
}

/** A group's name, linking to its view. */
export function groupLink(queue: string, group: string, focusKey: string): HTMLElement {
  return h('a', { class: 'group-name group-link', href: groupHref(queue, group), 'data-focus-key': focusKey }, group);
}
