// The live indicator in the page's header (index.html's #live, beside "Updated …"): a dot and a
// word for the open view. "live": its streams are open and changes show as they happen; "polling":
// no stream (it could not be opened, it dropped again and again, or the view has none to follow,
// as a finished job) and the page re-reads every few seconds as before; "connecting" between the
// two. The colour is never the only sign: the word says it, and the title says what it means.
// Not a live region: a screen reader is not told each flip, only what the chip says when read.
import type { LiveSummary } from './live-feed';

/** Shows `summary` in `chip`; null hides it (signed out, a view gone, the tab hidden). */
export function showLive(chip: HTMLElement, summary: LiveSummary | null, pollSeconds: number): void {
  chip.hidden = summary === null;
  if (!summary) {
    delete chip.dataset.live;
    return;
  }
  const { state, followed, wanted } = summary;
  chip.dataset.live = state;
  let text: string = state;
  let title: string;
  if (state === 'live' && followed < wanted) {
    text = `live · ${followed} of ${wanted}`;
    title = `${followed} of ${wanted} queues follow their event streams; the others are read every ${pollSeconds} s.`;
  } else if (state === 'live') {
    title = 'Changes show as they happen: this view follows its event streams.';
  } else if (state === 'connecting') {
    title = `Opening the event stream; until then the page re-reads every ${pollSeconds} s.`;
  } else {
    title = `No live stream (it could not be opened, or this view has none to follow): the page re-reads every ${pollSeconds} s.`;
  }
  chip.textContent = text;
  chip.title = title;
}
