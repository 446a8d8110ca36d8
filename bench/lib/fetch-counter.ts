// Counts the HTTP requests the production client sends to the REST bridge. Instrumentation only:
// every call goes to the real fetch, unchanged.
export interface FetchCounter {
  /** Requests started so far. */
  readonly count: number;
  /** Puts the real fetch back. */
  restore(): void;
}

export function installFetchCounter(): FetchCounter {
  const realFetch = globalThis.fetch;
  let count = 0;
  globalThis.fetch = function countingFetch(input, init) {
    count++;
    return realFetch(input, init);
  };
  return {
    get count() {
      return count;
    },
    restore() {
      globalThis.fetch = realFetch;
    },
  };
}
