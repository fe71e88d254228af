/**
 * Every relative link in the project's documents resolves: to an existing file, and, for a
 * link to a heading, to a heading of that file (GitHub's anchors, from github-slugger).
 * Links are read with markdown-it, so links inside code are not links. The documents speak of
 * the product only: no issue numbers, no paths outside the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import { describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../../..');
const md = new MarkdownIt({ html: true });

function markdownUnder(dir: string): string[] {
  return readdirSync(path.join(repo, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return markdownUnder(rel);
    return e.name.endsWith('.md') ? [rel] : [];
  });
}

const DOCUMENTS = [
  'README.md',
  'ARCHITECTURE.md',
  'CHANGELOG.md',
  'bench/README.md',
  'config-examples/kubernetes/README.md',
  ...markdownUnder('docs'),
];

function flat(tokens: Token[]): Token[] {
  return tokens.flatMap((t) => [t, ...flat(t.children ?? [])]);
}

function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const tokens = md.parse(readFileSync(file, 'utf8'), {});
  const anchors = new Set<string>();
  tokens.forEach((t, i) => {
    const inline = tokens[i + 1];
    if (t.type === 'heading_open' && inline !== undefined) {
      const text = flat(inline.children ?? [])
        .filter((c) => c.type === 'text' || c.type === 'code_inline')
        .map((c) => c.content)
        .join('');
      anchors.add(slugger.slug(text));
    }
  });
  return anchors;
}

function linksOf(file: string): string[] {
  return flat(md.parse(readFileSync(path.join(repo, file), 'utf8'), {}))
    .filter((t) => t.type === 'link_open')
    .map((t) => t.attrGet('href') ?? '')
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href));
}

/** Why the link does not resolve, or undefined when it does. */
function broken(file: string, href: string): string | undefined {
  const [target = '', anchor] = href.split('#');
  const resolved =
    target === ''
      ? path.join(repo, file)
      : path.resolve(path.dirname(path.join(repo, file)), target);
  if (path.relative(repo, resolved).startsWith('..')) return 'outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined || anchor === '' || !resolved.endsWith('.md')) return undefined;
  if (statSync(resolved).isDirectory()) return undefined;
  return anchorsOf(resolved).has(decodeURIComponent(anchor)) ? undefined : 'no such heading';
}

describe('links in the documents', () => {
  it('reads the documents it checks', () => {
    expect(DOCUMENTS).toContain('docs/reference/cli-flags.md');
    expect(linksOf('README.md').length).toBeGreaterThan(10);
  });

  it.each(DOCUMENTS)('%s: names no issue, work session or path outside the repository', (file) => {
    const text = readFileSync(path.join(repo, file), 'utf8');
    expect(text.match(/\bissues? #?\d+|\bsessions? of issue|\.\.\/shared\//gi) ?? []).toEqual([]);
  });

  it.each(DOCUMENTS)('%s: every relative link resolves', (file) => {
    const bad = linksOf(file)
      .map((href) => ({ href, why: broken(file, href) }))
      .filter((l) => l.why !== undefined);
    expect(bad).toEqual([]);
  });
});
