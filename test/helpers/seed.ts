/**
 * vitest setup: every fast-check property runs from a fixed seed, so a run is reproducible and
 * two runs of the suite test the same cases. `FC_SEED=<n> npm test` explores other cases; a
 * test that passes its own `seed` keeps it.
 */
import fc from 'fast-check';

const seed = Number(process.env.FC_SEED ?? 20261125);
fc.configureGlobal({ seed: Number.isFinite(seed) ? seed : 20261125 });
