/**
 * `npm run bench [-- SUITE...]`: runs the benchmark suites (all, or the named ones) against the
 * compiled code and prints medians. Each suite lives in its own module and registers here.
 * Figures are wall-clock on a shared machine: report medians and ratios, not single runs.
 */

export interface BenchSuite {
  readonly name: string;
  readonly description: string;
  run(): Promise<void>;
}

const suites: Record<string, () => Promise<BenchSuite>> = {
  server: () => import('./server.js').then((m) => m.suite),
  manifest: async () => (await import('./manifest.js')).suite,
  apply: async () => (await import('./apply.js')).suite,
  plan: async () => (await import('./plan.js')).suite,
  daemon: async () => (await import('./daemon.js')).suite,
  budget: async () => (await import('./budget.js')).suite,
  errors: async () => (await import('./errors.js')).suite,
  endpoints: async () => (await import('./endpoints.js')).suite,
  cutover: async () => (await import('./cutover.js')).suite,
  policy: async () => (await import('./policy.js')).suite,
  startup: async () => (await import('./startup.js')).suite,
};

async function runAll(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : Object.keys(suites);
  for (const name of names) {
    const load = suites[name];
    if (load === undefined) {
      process.stderr.write(`unknown suite "${name}"; known: ${Object.keys(suites).join(', ')}\n`);
      process.exitCode = 64;
      return;
    }
    const suite = await load();
    process.stdout.write(`\n## ${suite.name}: ${suite.description}\n`);
    await suite.run();
  }
}

await runAll();
