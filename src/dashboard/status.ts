// Messages for the user, in the page's aria-live region: what an action did ("Job 42 queued for
// retry") and what went wrong. The region exists in index.html from the start, so screen readers
// announce each change; an error is marked as such visually and by its text, not by colour alone.
import { byId } from './dom';

let clearTimer: number | undefined;

function show(text: string, kind: 'info' | 'error'): void {
  const region = byId('status');
  window.clearTimeout(clearTimer);
  region.dataset.kind = kind;
  region.textContent = kind === 'error' ? `Error: ${text}` : text;
  // Confirmations go after a while; errors stay until something replaces them.
  if (kind === 'info') clearTimer = window.setTimeout(() => clearStatus(), 8000);
}

export function announce(text: string): void {
  show(text, 'info');
}

/** Says what an action did and then goes to `hash`: the message stays on the page it leads to. */
export function announceAndGo(text: string, hash: string): void {
  announce(text);
  keepOnce = true;
  window.location.hash = hash;
}

let keepOnce = false;

/**
 * The user went to another page: a confirmation said on the one left behind ("Signed in.",
 * "Refreshed.") goes with it, unless its action is what moved (announceAndGo). Errors stay.
 */
export function leftPage(): void {
  if (keepOnce) keepOnce = false;
  else if (byId('status').dataset.kind === 'info') clearStatus();
}

export function announceError(text: string): void {
  show(text, 'error');
}

export function clearStatus(): void {
  const region = byId('status');
  region.textContent = '';
  delete region.dataset.kind;
}
