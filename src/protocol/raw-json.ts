// The exact text of each job's `data` inside a request body that JSON.parse already accepted, so
// groupq stores and delivers what the producer sent: JSON.parse + JSON.stringify would round
// integers beyond 2^53, turn 1.0 into 1 and reorder integer-like keys. The scanner assumes valid
// JSON (the caller parsed it first) and only finds where values start and end.

type Span = [start: number, end: number];

function skipSpace(text: string, i: number): number {
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
  return i;
}

function skipString(text: string, i: number): number {
  for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
  return i + 1;
}

function skipValue(text: string, i: number): number {
  if (text[i] === '"') return skipString(text, i);
  if (text[i] === '{' || text[i] === '[') {
    for (let depth = 0; ; ) {
      const c = text[i];
      if (c === '"') {
        i = skipString(text, i);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if ((c === '}' || c === ']') && --depth === 0) return i + 1;
      i++;
    }
  }
  while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
  return i;
}

/** Where each value of the object or array at `i` starts and ends, with its key for objects. */
function children(text: string, i: number): { key: string | null; span: Span }[] {
  const isObject = text[i] === '{';
  const out: { key: string | null; span: Span }[] = [];
  i = skipSpace(text, i + 1);
  if (text[i] === '}' || text[i] === ']') return out;
  for (;;) {
    let key: string | null = null;
    if (isObject) {
      const keyStart = i;
      i = skipString(text, i);
      key = JSON.parse(text.slice(keyStart, i)) as string;
      i = skipSpace(text, skipSpace(text, i) + 1); // past the colon
    }
    const start = i;
    i = skipValue(text, i);
    out.push({ key, span: [start, i] });
    i = skipSpace(text, i);
    if (text[i] !== ',') return out;
    i = skipSpace(text, i + 1);
  }
}

/** The raw `data` of the object at `i` (the last one wins, as with JSON.parse), if any. */
function dataOf(text: string, i: number): string | undefined {
  if (text[i] !== '{') return undefined;
  const member = children(text, i).findLast((child) => child.key === 'data');
  return member && text.slice(...member.span);
}

/** The raw `data` of a single job body `{"group", "data", ...}`. */
export function rawJobData(text: string): string | undefined {
  return dataOf(text, skipSpace(text, 0));
}

/** The raw `data` of each job of a batch body `{"jobs":[...]}` (undefined where there is none). */
export function rawBatchData(text: string): (string | undefined)[] {
  const start = skipSpace(text, 0);
  if (text[start] !== '{') return [];
  const jobs = children(text, start).findLast((child) => child.key === 'jobs');
  if (!jobs || text[jobs.span[0]] !== '[') return [];
  return children(text, jobs.span[0]).map((job) => dataOf(text, job.span[0]));
}
