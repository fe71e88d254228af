/**
 * The impact preview's first runs in a fresh process, as `edgesync plan` meets them, for the
 * policy bench (./policy.ts): `node preview-child.js [SRC]` (SRC: a build's `dist/src`; this
 * build's by default) parses and checks every guard first (as a plan's validation does), then
 * previews 1,000 endpoints' policy pairs (every policy changed, ./policy-corpus.ts) three times
 * and prints one JSON line of CPU milliseconds (every thread): `first`, the preview's code not
 * yet compiled (a plan's case); `compiled`, 1,000 other endpoints' pairs next (the code
 * compiled, their guards read for the first time); `warm`, those pairs again.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { checkedCel as CheckedCel } from '../src/hosted/cel.js';
import type { policyImpact as PolicyImpact } from '../src/policy-eval/impact.js';
import { policy } from './policy-corpus.js';

export interface PreviewChildResult {
  readonly first: number;
  readonly compiled: number;
  readonly warm: number;
}

const src = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', 'src'));
const load = async (module: string) =>
  (await import(pathToFileURL(path.join(src, module)).href)) as Record<string, unknown>;
const policyImpact = (await load('policy-eval/impact.js')).policyImpact as typeof PolicyImpact;
const checkedCel = (await load('hosted/cel.js')).checkedCel as typeof CheckedCel;

type Pair = readonly [Record<string, unknown>, Record<string, unknown>, string];

/** 1,000 endpoints' pairs from endpoint `from` on, as parsed from text (as a plan reads them). */
function pairs(from: number): Pair[] {
  const out: Pair[] = [];
  for (let i = from; i < from + 1_000; i++) {
    const [before, after] = [policy(i, true), policy(i, false)].map(
      (p) => JSON.parse(JSON.stringify(p)) as Record<string, unknown>,
    ) as [Record<string, unknown>, Record<string, unknown>];
    out.push([before, after, `https://ep-${i}.example.com`]);
  }
  return out;
}

function cpuMs(set: readonly Pair[]): number {
  const before = process.cpuUsage();
  for (const [a, b, url] of set) policyImpact(url, a, b);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const first = pairs(5_000);
const second = pairs(0);
for (const [before] of [...first, ...second]) {
  for (const rule of before.on_http_request as { expressions?: string[] }[])
    for (const expression of rule.expressions ?? []) checkedCel(expression);
}
const result: PreviewChildResult = {
  first: cpuMs(first),
  compiled: cpuMs(second),
  warm: cpuMs(second),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
