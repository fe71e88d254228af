/**
 * Route selection, allow lists and user-agent filters survive the migration: the generated
 * policies, evaluated by a real CEL engine, choose, apply and refuse exactly as the edges did.
 * The mutation tests break the translation the ways published examples got it wrong and check
 * that the property then fails: a property that cannot fail proves nothing.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { agrees, edgeArb, requestArb } from './semantics.js';

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

const property = fc.property(
  edgeArb,
  fc.array(requestArb, { minLength: 1, maxLength: 12 }),
  (edge, requests) => agrees(edge, requests),
);

afterEach(() => {
  mutation.current = 'none';
});

describe('migrated policies behave like their edges', () => {
  it('one route per request, the same modules, the same refusals', () => {
    fc.assert(property, { numRuns: 120 });
  });
});

describe('the property catches broken translations', () => {
  it.each([
    'manifest order',
    'guards without exclusion',
    'allow lists joined with and',
    'missing user agent allowed',
  ])('%s', (name) => {
    mutation.current = name;
    expect(fc.check(property, { numRuns: 200 }).failed).toBe(true);
  });
});
