/**
 * The two CEL implementations, loaded on first use: `@marcbachmann/cel-js` (the checker that
 * `validate` and the local server judge expressions with, src/hosted/cel.ts) and `@bufbuild/cel`
 * (the evaluator's engine, src/policy-eval/cel.ts, and the local server's).
 *
 * Why lazily: together they are hundreds of modules (`@bufbuild/cel` brings `@bufbuild/protobuf`
 * and an RE2), and loading them was most of the start-up of a command that never reads CEL
 * (`validate` of a directory with no cloud endpoint took 0.35 s instead of 0.10 s). Their users
 * are synchronous (the rules within a document, a plan's preview), so the load is a synchronous
 * `require` on the first call that needs one: Node (20.19 and later) loads an ES module so, into
 * the same module cache as `import`. Everything in src/ reaches these libraries' values through
 * here (their types are imported as types only), so a process holds one instance of each.
 */
import { createRequire } from 'node:module';

type CelJs = typeof import('@marcbachmann/cel-js');
type BufCel = typeof import('@bufbuild/cel');

const load = createRequire(import.meta.url);

let celJsModule: CelJs | undefined;
let bufCelModule: BufCel | undefined;

/** `@marcbachmann/cel-js`, loaded at the first call. */
export function celJs(): CelJs {
  celJsModule ??= load('@marcbachmann/cel-js') as CelJs;
  return celJsModule;
}

/** `@bufbuild/cel`, loaded at the first call. */
export function bufCel(): BufCel {
  bufCelModule ??= load('@bufbuild/cel') as BufCel;
  return bufCelModule;
}
