// The dashboard's entry point: sign-in and sign-out, the hash router (#/ the overview of every
// queue and their cards, #/queue/<name> shows one, #/queue/<name>/job/<id> one job,
// #/queue/<name>/group/<group> one group), and the refresh every few seconds of the open view
// while the tab is visible (not of a view whose queue or job is gone). A 401 from any call signs out with a message: the token was rotated or
// mistyped.
//
// Live: each view follows the event streams it names (View.streams; the list, its queues') through
// a LiveFeed of its own, closed when the view is left, the tab hidden or the user signs out. A
// view whose streams are all open is redrawn by their events, and its timed refresh comes only
// every LIVE_REFRESH_MS, for what no event tells (a pause, a config, a removal, a queue deleted
// elsewhere). The list keeps its timed refresh: its ages and rates move with the clock. A view
// whose stream could not be opened, or dropped again and again, polls as before.
import type { GroupqClient } from '../client';
import { byId, showOnly } from './dom';
import { formatInstant } from './format';
import { GroupView } from './group/group-view';
import { JobView } from './job/job-view';
import { queueEventsPath } from './live/event-stream';
import { showLive } from './live/indicator';
import { LiveFeed } from './live/live-feed';
import { QueueView } from './queue/queue-view';
import { refreshQueues } from './queues/queues-view';
import { clientFor, describeError, forgetToken, isAuthFailure, keepToken, storedToken } from './session';
import { announce, announceError, clearStatus, leftPage } from './status';
import type { View } from './view';

const REFRESH_MS = 5000;
/** A live view is still read this often: for what its events do not carry. */
const LIVE_REFRESH_MS = 30_000;
/** The list's re-reads for events, at most one a second: each reads every queue's metrics. */
const LIST_GAP_MS = 1000;

const signInView = byId('sign-in-view');
const queuesView = byId('queues-view');
const queueView = byId('queue-view');
const views = [signInView, queuesView, queueView];
const sessionBar = byId('session-bar');
const updated = byId('updated');
const liveChip = byId('live');
const form = byId<HTMLFormElement>('sign-in-form');
const tokenInput = byId<HTMLInputElement>('token');
const signInError = byId('sign-in-error');

let client: GroupqClient | null = null;
/** The token `client` uses: the streams are read with fetch, beside the client. */
let adminToken: string | null = null;
/** The open view's streams; null while signed out or hidden. */
let feed: LiveFeed | null = null;
/** When the open view was last read (a timed read counts from its start): a live view is read again LIVE_REFRESH_MS after. */
let lastRead = 0;
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
  closeFeed();
  client = null;
  adminToken = null;
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
  start(candidate, token, true);
  announce('Signed in.');
}

function start(signedIn: GroupqClient, token: string, moveFocus = false): void {
  client = signedIn;
  adminToken = token;
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
  openFeed();
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
 * Opens the live feed of the open view, anew (the old one's streams close); none while the tab is
 * hidden. Its streams are followed after each read (the view says which from what it read).
 */
function openFeed(): void {
  closeFeed();
  const view = openView;
  if (!adminToken || document.visibilityState !== 'visible' || view?.gone) return;
  const mine: LiveFeed = new LiveFeed({
    token: adminToken,
    gapMs: view ? view.liveGapMs : LIST_GAP_MS,
    // The list is read every 5 s anyway; a view read every 30 s must catch up once attached.
    readOnOpen: view !== null,
    read: () => (feed === mine ? refresh(true) : Promise.resolve()),
    summarized: (summary) => feed === mine && showLive(liveChip, summary, REFRESH_MS / 1000),
  });
  feed = mine;
  showLive(liveChip, { state: 'connecting', followed: 0, wanted: 0 }, REFRESH_MS / 1000);
  if (!view) return;
  view.onRead = () => {
    if (feed !== mine) return;
    if (view.gone) return closeFeed(); // it stopped reading: nothing live either
    const { paths, job } = view.streams();
    mine.follow(paths, { job });
  };
}

function closeFeed(): void {
  feed?.close();
  feed = null;
  showLive(liveChip, null, REFRESH_MS / 1000);
}

/**
 * How many queues' streams the list follows at once. Over HTTP/1.1 a browser opens 6 connections
 * per origin (for all its tabs) and each stream holds one: 2 leave room for the reads. HTTP/2 and
 * HTTP/3 carry them all on one connection. The others are read by the timer.
 */
function listCap(): number {
  const [page] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
  return page?.nextHopProtocol === 'h2' || page?.nextHopProtocol === 'h3' ? 10 : 2;
}

/**
 * Re-reads the visible view; calls while a refresh of the same view runs share it, unless `fresh`
 * (an event: the read in flight may have started before it). A view opened while another one
 * loads gets a read of its own: waiting for the other would leave it empty until the next timed
 * refresh.
 */
function refresh(fresh = false): Promise<void> {
  const view = openView;
  if (view?.gone) return Promise.resolve();
  if (!fresh && refreshing?.view === view) return refreshing.done;
  const done = (async () => {
    let ok: boolean;
    if (view) ok = await view.refresh();
    else if (client) {
      const names = await refreshQueues(client, byId('queues')).catch((error: unknown) => (fail(error), undefined));
      ok = names !== undefined;
      // Followed by name, as the cards: the worst-first order moves, and would reopen streams.
      if (names && view === openView) feed?.follow(names.map((name) => queueEventsPath(name)), { cap: listCap() });
    } else return;
    if (ok && client && view === openView) {
      updated.textContent = `Updated ${formatInstant(Date.now())}`;
      lastRead = Date.now();
    }
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
// A hidden tab holds no stream: it reads nothing either, and reads all once shown again.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState !== 'visible') return closeFeed();
  if (!client) return;
  openFeed();
  void refresh();
});
window.setInterval(() => {
  if (document.visibilityState !== 'visible') return;
  if (openView && feed?.live && Date.now() - lastRead < LIVE_REFRESH_MS) return;
  lastRead = Date.now();
  void refresh();
}, REFRESH_MS);

const token = storedToken();
if (token) start(clientFor(token), token);
else signOut();
