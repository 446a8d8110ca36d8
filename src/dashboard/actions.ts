// What a queue's panels share: the queue's client, a way to redraw the view, and `act`, which
// runs a button's action (retry, remove, pause...) the same way everywhere: the button is busy
// while it runs, the outcome is announced in the live region, errors go to the page's handler,
// and the view is re-read so it shows what the action changed.
import type { GroupqClient, QueueClient } from '../client';
import { announce } from './status';

export interface QueueContext {
  client: GroupqClient;
  queue: QueueClient;
  /** Re-reads and redraws the whole queue view. */
  refresh(): Promise<void>;
  /** A failed call: back to sign-in on 401, else the message in the live region. */
  fail(error: unknown): void;
}

/**
 * Runs `work` for `button`; `work` answers the sentence to announce ("Job 42 queued again.").
 * A busy button ignores clicks until the view has been redrawn, so a double click acts once. It
 * is marked aria-disabled rather than disabled: disabling the focused button would drop keyboard
 * focus to the page's start.
 */
export async function act(ctx: QueueContext, button: HTMLButtonElement, work: () => Promise<string>): Promise<void> {
  if (button.getAttribute('aria-disabled') === 'true') return;
  button.setAttribute('aria-disabled', 'true');
  try {
    announce(await work());
  } catch (error) {
    ctx.fail(error);
  }
  await ctx.refresh();
  button.removeAttribute('aria-disabled');
}
