// The admin token for this tab: typed once, kept in sessionStorage (gone when the tab closes;
// never localStorage, never in the URL), and the GroupqClient built from it. The dashboard is
// served by the Worker it talks to, so the API's origin is the page's own.
import { GroupqClient, GroupqError } from '../client';

const STORAGE_KEY = 'groupq.adminToken';

function storage(): Storage | null {
  // Storage can be disabled (privacy settings): then the token lives in memory for this page.
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

let memoryToken: string | null = null;

export function storedToken(): string | null {
  return storage()?.getItem(STORAGE_KEY) ?? memoryToken;
}

export function keepToken(token: string): void {
  memoryToken = token;
  try {
    storage()?.setItem(STORAGE_KEY, token);
  } catch {
    // Quota or disabled storage: the in-memory copy is enough for this page.
  }
}

export function forgetToken(): void {
  memoryToken = null;
  storage()?.removeItem(STORAGE_KEY);
}

export function clientFor(token: string): GroupqClient {
  // One retry: the page refreshes every few seconds anyway, and a stuck refresh is worse.
  return new GroupqClient({ url: window.location.origin, token, retries: 1 });
}

/** True when the API refused the token: the page goes back to the sign-in form. */
export function isAuthFailure(error: unknown): boolean {
  return error instanceof GroupqError && (error.status === 401 || error.status === 403);
}

/** What to tell the user about a failed call. */
export function describeError(error: unknown): string {
  if (error instanceof GroupqError) {
    if (error.status === 0) return 'The groupq API did not answer. Check your connection; the page keeps trying.';
    return `${error.message} (${error.code}, HTTP ${error.status})`;
  }
  return error instanceof Error ? error.message : String(error);
}
