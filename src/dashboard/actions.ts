// What a queue's panels share: the queue's client, a way to redraw the view, and `act`, which
// runs a button's action (retry, remove, pause...) the same way everywhere: the button is busy
// while it runs, the outcome is announced in the live region, errors go to the page's handler,
// and the view is re-read so it shows what the action changed. Also the actions two views both
// offer: a job's Cancel (the jobs table and the job's view) and a group's Pause/Resume (the groups
// list and the group's view).
import type { GroupqClient, Job, JobState, QueueClient } from '../client';
import type { Confirmer } from './confirm';
import { h } from './dom';
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

/** The states a job can be cancelled in. */
export const CANCELLABLE: ReadonlySet<JobState> = new Set(['waiting', 'delayed', 'active']);

/**
 * Cancel for a waiting, delayed or active job, in the jobs table and in the job's own view: it
 * asks first, and the question is closed with "Keep job" (a second "Cancel" would read as
 * going ahead).
 */
export function cancelJobControl(ctx: QueueContext, confirmer: Confirmer, job: Job, shown: { key: string; label: string; small?: boolean }): HTMLElement {
  return confirmer.control({
    ...shown,
    action: 'cancel',
    ariaLabel: `Cancel job ${job.id}`,
    question: `Cancel job ${job.id}? It will not run${job.state === 'active' ? ' again; its endpoint learns of it at its next callback' : ''}.`,
    confirmLabel: 'Confirm cancel',
    dismiss: { label: 'Keep job', said: `Job ${job.id} kept.` },
    run: (button) => act(ctx, button, async () => (await ctx.queue.cancel(job.id), `Job ${job.id} cancelled.`)),
  });
}

/** Pause or Resume for one group, in the groups list (`small`) and in the group's own view. */
export function pauseGroupButton(ctx: QueueContext, group: string, paused: boolean, { small = false, focusKey }: { small?: boolean; focusKey: string }): HTMLButtonElement {
  const label = paused ? 'Resume' : 'Pause';
  return h(
    'button',
    {
      type: 'button',
      class: small ? 'small' : '',
      'data-action': paused ? 'resume-group' : 'pause-group',
      'data-focus-key': focusKey,
      'aria-label': `${label} group ${group}`,
      onclick: (e: Event) =>
        void act(ctx, e.currentTarget as HTMLButtonElement, async () => {
          if (paused) await ctx.queue.resumeGroup(group);
          else await ctx.queue.pauseGroup(group);
          return `Group ${group} ${paused ? 'resumed' : 'paused'}.`;
        }),
    },
    label,
  );
}
