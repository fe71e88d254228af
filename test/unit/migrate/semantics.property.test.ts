/**
 * Route selection, allow lists and user-agent filters survive the migration: the generated
 * policies, evaluated by a real CEL engine, choose, apply and refuse exactly as the edges did.
 * The mutation tests break the translation the ways published examples got it wrong and check
 * that the property then fails: a property that cannot fail proves nothing.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { agrees, caseArb } from './semantics.js';

const mutation = vi.hoisted(() => ({ current: 'none' }));

vi.mock('../../../src/migrate/cel.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/migrate/cel.js')>();
  const on = (name: string) => mutation.current === name;
  return {
    ...real,
    bySpecificity: <T extends { match: string }>(routes: readonly T[]) =>
      on('manifest order') ? [...routes] : real.bySpecificity(routes as never),
    routeGuards: (ordered: Parameters<typeof real.routeGuards>[0]) =>
      on('guards without exclusion')
        ? ordered.map(real.matchExpression)
        : real.routeGuards(ordered),
    emailRefused: (addresses: readonly string[], domains: readonly string[]) => {
      if (!on('allow lists joined with and')) return real.emailRefused(addresses, domains);
      const refusals = [];
      if (addresses.length > 0) refusals.push(real.emailRefused(addresses, []));
      if (domains.length > 0) refusals.push(real.emailRefused([], domains));
      return refusals.join(' || ');
    },
    userAgentDenied: (allow: readonly string[], deny: readonly string[], emptyAllowed: boolean) =>
      real.userAgentDenied(allow, deny, on('missing user agent allowed') ? true : emptyAllowed),
  };
});

vi.mock('../../../src/migrate/modules.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/migrate/modules.js')>();
  return {
    ...real,
    routePolicyRules: (...args: Parameters<typeof real.routePolicyRules>) => {
      const [value, path, label, guards, ...rest] = args;
      const unguarded = mutation.current === 'route policy without its guard';
      return real.routePolicyRules(value, path, label, unguarded ? [] : guards, ...rest);
    },
  };
});

const property = fc.property(caseArb, ([edge, requests]) => agrees(edge, requests));

/** Every run of the property and of its mutations draws the same cases. */
const SEED = 20_261_126;

afterEach(() => {
  mutation.current = 'none';
});

describe('migrated policies behave like their edges', () => {
  it('one route per request, the same modules, the same refusals', () => {
    fc.assert(property, { numRuns: 120, seed: SEED });
  });
});

describe('the property catches broken translations', () => {
  it.each([
    'manifest order',
    'guards without exclusion',
    'allow lists joined with and',
    'missing user agent allowed',
    'route policy without its guard',
  ])('%s', (name) => {
    mutation.current = name;
    expect(fc.check(property, { numRuns: 200, seed: SEED }).failed).toBe(true);
  });
});
