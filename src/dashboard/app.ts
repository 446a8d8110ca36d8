// The dashboard's entry point: sign-in and sign-out, the hash router (#/ the overview of every
// queue and their cards, #/queue/<name> shows one, #/queue/<name>/job/<id> one job,
// #/queue/<name>/group/<group> one group), and the refresh every few seconds of the open view
// while the tab is visible (not of a view whose queue or job is gone). A 401 from any call signs out with a message: the token was rotated or
// mistyped.
import type { GroupqClient } from '../client';
import { byId, showOnly } from './dom';
import { formatInstant } from './format';
import { GroupView } from './group/group-view';
import { JobView } from './job/job-view';
import { QueueView } from './queue/queue-view';
import { refreshQueues } from './queues/queues-view';
import { clientFor, describeError, forgetToken, isAuthFailure, keepToken, storedToken } from './session';
import { announce, announceError, clearStatus, leftPage } from './status';
import type { View } from './view';

const REFRESH_MS = 5000;

const signInView = byId('sign-in-view');
const queuesView = byId('queues-view');
const queueView = byId('queue-view');
const views = [signInView, queuesView, queueView];
const sessionBar = byId('session-bar');
const updated = byId('updated');
const form = byId<HTMLFormElement>('sign-in-form');
const tokenInput = byId<HTMLInputElement>('token');
const signInError = byId('sign-in-error');

let client: GroupqClient | null = null;
/** A queue's, a job's or a group's view; null: the queue list. */
let openView: View<unknown> | null = null;
/** The refresh in flight and the view it reads (null: the queue list). */
let refreshing: { view: View<unknown> | null; done: Promise<void> } | null = null;

function fail(error: unknown): void {
  if (isAuthFailure(error)) signOut('The API refused the token (it may have been rotated). Sign in again.');
  else announceError(describeError(error));
}

function signOut(message = ''): void {
  forgetToken();
  client = null;
  openView = null;
  sessionBar.hidden = true;
  queueView.replaceChildren();
  clearStatus();
  signInError.textContent = message;
  tokenInput.value = '';
  document.title = 'Sign in · groupq dashboard';
  showOnly(signInView, views);
  tokenInput.focus();
}

async function signIn(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const token = tokenInput.value.trim();
  if (token === '') {
    signInError.textContent = 'Enter the admin token.';
    tokenInput.focus();
    return;
  }
  signInError.textContent = '';
  const candidate = clientFor(token);
  try {
    // Any admin read proves the token; this one is needed for the first view anyway.
    await candidate.queues();
  } catch (error) {
    signInError.textContent = isAuthFailure(error)
      ? 'Wrong token: the API answered 401. Use the Worker\'s admin token (GROUPQ_ADMIN_TOKEN).'
      : describeError(error);
    tokenInput.select();
    return;
  }
  keepToken(token);
  tokenInput.value = '';
  // The form goes away with the focus in it: move focus to the view's heading.
  start(candidate, true);
  announce('Signed in.');
}

function start(signedIn: GroupqClient, moveFocus = false): void {
  client = signedIn;
  sessionBar.hidden = false;
  void route(moveFocus);
}

/** The view the hash names; `moveFocus` when the user navigated (not on page load). */
async function route(moveFocus: boolean): Promise<void> {
  if (!client) return;
  if (moveFocus) leftPage();
  // Queue names hold no "/"; job ids and groups are percent-encoded.
  const match = /^#\/queue\/([^/]+)(?:\/(job|group)\/(.+))?$/.exec(window.location.hash);
  const name = match ? safeDecode(match[1]!) : null;
  const kind = match?.[2];
  const part = match?.[3] === undefined ? null : safeDecode(match[3]);
  if (name === null) {
    openView = null;
    queueView.replaceChildren();
    document.title = 'Queues · groupq dashboard';
    showOnly(queuesView, views);
  } else {
    byId('queues').replaceChildren();
    if (part === null) openView = new QueueView(client, name, fail);
    else openView = kind === 'job' ? new JobView(client, name, part, fail) : new GroupView(client, name, part, fail);
    queueView.replaceChildren(openView.element);
    const what = part === null ? '' : `${kind === 'job' ? 'Job' : 'Group'} ${part} · `;
    document.title = `${what}${name} · groupq dashboard`;
    showOnly(queueView, views);
  }
  await refresh();
  if (!moveFocus) return;
  // Tell screen reader and keyboard users that the view changed: focus its heading.
  const heading = document.querySelector<HTMLElement>('main section:not([hidden]) h1');
  heading?.setAttribute('tabindex', '-1');
  heading?.focus();
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * Re-reads the visible view; calls while a refresh of the same view runs share it. A view opened
 * while another one loads gets a read of its own: waiting for the other would leave it empty
 * until the next timed refresh.
 */
function refresh(): Promise<void> {
  const view = openView;
  if (view?.gone) return Promise.resolve();
  if (refreshing?.view === view) return refreshing.done;
  const done = (async () => {
    let ok: boolean;
    if (view) ok = await view.refresh();
    else if (client) ok = await refreshQueues(client, byId('queues')).then(() => true, (error: unknown) => (fail(error), false));
    else return;
    if (ok && client && view === openView) updated.textContent = `Updated ${formatInstant(Date.now())}`;
  })().finally(() => {
    if (refreshing?.done === done) refreshing = null;
  });
  refreshing = { view, done };
  return done;
}

form.addEventListener('submit', (event) => void signIn(event));
byId('sign-out').addEventListener('click', () => signOut('Signed out.'));
byId('refresh').addEventListener('click', () => void refresh().then(() => client && announce('Refreshed.')));
// Only hashes of the router (#/...): the skip link's #main is not a route.
window.addEventListener('hashchange', () => {
  if (window.location.hash === '' || window.location.hash.startsWith('#/')) void route(true);
});
byId('skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  byId('main').focus();
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') void refresh();
});
window.setInterval(() => {
  if (document.visibilityState === 'visible') void refresh();
}, REFRESH_MS);

const token = storedToken();
if (token) start(clientFor(token));
else signOut();
