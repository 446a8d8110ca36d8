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

export function announceError(text: string): void {
  show(text, 'error');
}

export function clearStatus(): void {
  const region = byId('status');
  region.textContent = '';
  delete region.dataset.kind;
}
