// Confirmation of what cannot be undone (remove a job, clean jobs, delete a repeat or a queue):
// the first press asks, in place, and the question stays, across refreshes, until it is answered
// with the confirm button or Cancel. Only one question is open per owner (a panel) at a time.
// The confirm button takes the asking button's focus key, so keyboard focus moves onto it.
import { h } from './dom';
import { announce } from './status';

export interface Confirmable {
  /** Names the action and its target ('remove:<id>'): the question that is open, if any. */
  key: string;
  /** The first button's text ('Remove') and, for screen readers, what it acts on. */
  label: string;
  ariaLabel?: string;
  /** Asked next to the buttons: 'Remove job 42? It cannot be undone.' */
  question: string;
  /** The confirm button's text ('Confirm remove'). */
  confirmLabel: string;
  /** Kind for tests and styles (data-action). */
  action: string;
  /**
   * The button that closes the question without acting, and what is announced then (default
   * 'Cancel' and 'Cancelled.'): another word where the action itself is a cancel.
   */
  dismiss?: { label: string; said: string };
  /** Does the action; the button is passed for `act` (busy state). */
  run: (button: HTMLButtonElement) => Promise<void>;
  small?: boolean;
}

export class Confirmer {
  private open: string | null = null;

  /** `redraw` draws the owner again (from its own state, without a request). */
  constructor(private readonly redraw: () => void) {}

  /** The asking button, or the open question with its two answers. */
  control(c: Confirmable): HTMLElement {
    const size = c.small ? 'small' : '';
    if (this.open !== c.key) {
      return h('button', {
        type: 'button',
        class: size,
        'data-action': c.action,
        'data-focus-key': c.key,
        'aria-label': c.ariaLabel,
        onclick: () => this.ask(c),
      }, c.label);
    }
    return h(
      'span',
      { class: 'confirm', role: 'group', 'aria-label': c.question, 'data-confirm': c.key },
      h('span', { class: 'confirm-question' }, c.question),
      h('button', {
        type: 'button',
        class: `${size} danger`,
        'data-action': `confirm-${c.action}`,
        'data-focus-key': c.key,
        onclick: (e: Event) => {
          this.open = null;
          void c.run(e.currentTarget as HTMLButtonElement);
        },
      }, c.confirmLabel),
      h('button', {
        type: 'button',
        class: size,
        'data-action': 'cancel-confirm',
        'data-focus-key': `${c.key}:cancel`,
        onclick: () => this.cancel(c),
      }, c.dismiss?.label ?? 'Cancel'),
    );
  }

  private ask(c: Confirmable): void {
    this.open = c.key;
    this.redraw();
    announce(`Press "${c.confirmLabel}" to go ahead, or Cancel: ${c.question}`);
  }

  private cancel(c: Confirmable): void {
    this.open = null;
    // Focus goes back to the asking button, drawn again under the same key.
    const focused = document.activeElement as HTMLElement | null;
    if (focused) focused.dataset.focusKey = c.key;
    this.redraw();
    announce(c.dismiss?.said ?? 'Cancelled.');
  }
}
