// DOM building for the dashboard: elements from tag, properties and children, text only (job data
// and error messages are user input: nothing here ever parses a string as HTML), JSON that wraps
// between its parts, and a re-render that keeps keyboard focus where it was, so the refresh every
// few seconds never yanks it away.

/** What `h()` and `render()` take as children: nodes, and text; null, undefined and false are left out. */
export type Child = Node | string | number | null | undefined | false;

/** Properties of `h()`: attributes (strings, numbers, booleans), `on<event>` listeners, dataset. */
export type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

/**
 * An element with attributes and children. `false`/`null`/`undefined` attributes and children
 * are left out; `true` sets an empty attribute; strings become text nodes, never markup.
 */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setProps(el, props);
  append(el, children);
  return el;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element (the chart), built the same way. */
export function svg<K extends keyof SVGElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  setProps(el, props);
  append(el, children);
  return el;
}

function setProps(el: Element, props: Props): void {
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) el.setAttribute(name, String(value));
  }
}

function append(el: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Replaces the children of `container`, keeping what the user did to the old ones: if focus was
 * on an element carrying `data-focus-key`, the new element with the same key gets it back (same
 * button, new node), or else the container itself when it is focusable; and
 * `<details data-open-key>` that were open stay open.
 */
export function render(container: Element, ...children: Child[]): void {
  const active = document.activeElement;
  const hadFocus = active instanceof HTMLElement && container.contains(active) && active !== container;
  const focusKey = hadFocus ? active.dataset.focusKey : undefined;
  const open = new Set([...container.querySelectorAll<HTMLDetailsElement>('details[open][data-open-key]')].map((d) => d.dataset.openKey));
  container.replaceChildren();
  append(container, children);
  for (const details of container.querySelectorAll<HTMLDetailsElement>('details[data-open-key]')) {
    if (open.has(details.dataset.openKey)) details.open = true;
  }
  if (!hadFocus) return;
  const again = focusKey === undefined ? null : container.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`);
  if (again) again.focus({ preventScroll: true });
  // The focused element is gone (a retried job left its tab): a container that can take focus
  // (tabindex -1) keeps it nearby instead of letting it fall to the page's start.
  else if (container instanceof HTMLElement && container.hasAttribute('tabindex')) container.focus({ preventScroll: true });
}

/**
 * JSON as text that wraps between its parts, never inside a word: a `<wbr>` after each `,` and
 * `:` (compact JSON has no space to wrap at; CSS alone would break it anywhere, mid-word). The
 * text, and what is copied from it, stays the JSON itself.
 */
export function jsonText(json: string): Child[] {
  return json.split(/(?<=[,:])/).flatMap((part, i) => (i === 0 ? [part] : [document.createElement('wbr'), part]));
}

/** Shows exactly one of the views (the others get `hidden`). */
export function showOnly(visible: HTMLElement, all: HTMLElement[]): void {
  for (const view of all) view.hidden = view !== visible;
}

/** An element the page's HTML must have; a missing one is a bug in index.html. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`dashboard: #${id} missing from index.html`);
  return el as T;
}

/** Name-value pairs (a job's or a group's fields), each row marked `data-field` with its name. */
export function fieldList(rows: [name: string, ...value: Child[]][]): HTMLDListElement {
  return h('dl', { class: 'fields' }, ...rows.map(([name, ...value]) => h('div', { 'data-field': name }, h('dt', {}, name), h('dd', {}, ...value))));
}

/**
 * A table that scrolls inside its own box (or stacks its rows on a phone, with `stack`), with a
 * caption for screen readers and a header row of column names.
 */
export function dataTable(className: string, caption: string, columns: string[], rows: Node[]): HTMLDivElement {
  return h(
    'div',
    { class: 'table-box' },
    h(
      'table',
      { class: className },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, ...columns.map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, ...rows),
    ),
  );
}
