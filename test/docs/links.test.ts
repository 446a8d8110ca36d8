// The docs hold together: every relative link and #anchor between the README and docs/*.md
// resolves (the file exists; the anchor is a heading of the target as GitHub slugs it), every
// image is there, every repository path a page names in backticks exists, and every
// `docs/<page>.md#<anchor>` that a comment in src/, scripts/, bench/ or test/ cites resolves. Pages
// are split and renamed over time; without this, links and citations rot silently.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** The README and every page of docs/, as paths from the repository root. */
const pages = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

/** The page's lines outside fenced code blocks (a `# comment` in a shell block is no heading). */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (line.startsWith('```')) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A heading's anchor as GitHub makes it: the rendered text, lowercased, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
  return text.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor of a page; a repeated heading gets -1, -2, ... as on GitHub. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(read(page))) {
    const heading = /^#{1,6} +(.+?)\s*#*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Links and image sources of a page's prose, with inline code taken out. */
function links(page: string): string[] {
  const text = prose(read(page)).join('\n').replace(/`[^`\n]*`/g, '');
  const markdown = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
  const html = [...text.matchAll(/<(?:img|a)\s[^>]*?(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  return [...markdown, ...html];
}

/** Why a link from `page` does not resolve, or null when it does. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: and the like: not ours to check
  const [file = '', anchor] = target.split('#');
  const resolved = file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
  if (resolved.startsWith('../')) return `${target} leaves the repository`;
  if (!existsSync(path.join(root, resolved))) return `${target}: no file ${resolved}`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not a page`;
  return anchors(resolved).has(anchor) ? null : `${target}: ${resolved} has no heading #${anchor}`;
}

/** Source files whose comments may cite the docs. */
function sources(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(ts|mjs|js|lua)$/.test(f) && !/node_modules|results|fixtures/.test(f))
    .map((f) => `${dir}/${f}`)
    .filter((f) => statSync(path.join(root, f)).isFile());
}

const citingDirs = ['src', 'scripts', 'bench'];

/** Tests whose comments may cite the docs; test/docs names README.md on purpose. */
const citingTests = () => sources('test').filter((f) => !f.startsWith('test/docs/'));

/** A line's comment, or '' when it has none: a test's name or assertion may name the README file itself. */
function commentOf(line: string): string {
  const trimmed = line.trimStart();
  if (/^(\/\/|\/\*|\*)/.test(trimmed)) return trimmed;
  const at = line.indexOf(' // ');
  return at === -1 ? '' : line.slice(at);
}

/** Whether git ignores `file` (exit 0 of `git check-ignore`). */
function ignored(file: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', file], { cwd: root });
    return true;
  } catch {
    return false;
  }
}

describe('docs links', () => {
  it('finds the pages and their headings', () => {
    expect(pages).toContain('docs/security.md');
    expect(anchors('docs/delivery.md')).toContain('verifying-the-signature');
  });

  it.each(pages)('%s: every relative link, anchor and image resolves', (page) => {
    const broken = links(page).map((target) => brokenLink(page, target)).filter((why) => why !== null);
    expect(broken).toEqual([]);
  });

  // A path git ignores (bench/results/, dist/) is something a run writes: it need not exist yet.
  it('names only repository paths that exist, in backticks (or that git ignores: written by a run)', () => {
    const missing: string[] = [];
    for (const page of pages) {
      const text = prose(read(page)).join('\n');
      for (const [, named = ''] of text.matchAll(/`((?:src|scripts|test|bench|examples|docs)\/[\w./-]+)`/g)) {
        if (!existsSync(path.join(root, named)) && !ignored(named)) missing.push(`${page}: ${named}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('links docs/security.md near the top of the README, and every page from it', () => {
    const readme = read('README.md');
    expect(readme.split('\n').slice(0, 20).join('\n')).toContain('](docs/security.md)');
    const linked = new Set(links('README.md').map((target) => target.split('#')[0]));
    expect(pages.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it('resolves every docs page and anchor that a comment in src/, scripts/, bench/ or test/ cites', () => {
    const broken: string[] = [];
    let cited = 0;
    for (const file of [...citingDirs.flatMap(sources), ...citingTests()]) {
      for (const [, target = ''] of read(file).matchAll(/\b((?:docs\/[\w-]+\.md|README\.md)(?:#[\w-]+)?)/g)) {
        cited += 1;
        const why = brokenLink('README.md', target);
        if (why !== null) broken.push(`${file}: ${why}`);
      }
    }
    expect(broken).toEqual([]);
    expect(cited).toBeGreaterThan(0);
  });

  it('leaves no citation of the README by section name in src/, scripts/, bench/ or test/', () => {
    // The old form ("README, Delivery") names a section the README no longer has; cite the page.
    // Sources are read whole; tests by their comments only.
    const lines = (file: string, text: (line: string) => string) =>
      read(file).split('\n').map((line, i) => ({ file, line: text(line), at: i + 1 }));
    const old = [
      ...citingDirs.flatMap(sources).flatMap((file) => lines(file, (line) => line)),
      ...citingTests().flatMap((file) => lines(file, commentOf)),
    ]
      .filter(({ line }) => /README(?![.\w])/.test(line))
      .map(({ file, line, at }) => `${file}:${at}: ${line.trim()}`);
    expect(old).toEqual([]);
  });
});
