import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PolicyCase } from '../../../src/manifest/policy/tests.js';
import { policyImpact } from '../../../src/policy-eval/impact.js';
import { cidrEdges, parseCidr } from '../../../src/policy-eval/ip.js';
import { MAX_PROBES, probesFor } from '../../../src/policy-eval/probes.js';

const URL_ = 'https://app.example.com';

const forward = (url: string) => ({ type: 'forward-internal', config: { url } });
const guarded = {
  on_http_request: [
    {
      expressions: ["req.url.path.startsWith('/admin')"],
      actions: [
        { type: 'oauth', config: { provider: 'google' } },
        forward('https://admin.internal'),
      ],
    },
    { actions: [forward('https://app.internal')] },
  ],
};
const open = {
  on_http_request: [
    {
      expressions: ["req.url.path.startsWith('/admin')"],
      actions: [forward('https://admin.internal')],
    },
    { actions: [forward('https://app.internal')] },
  ],
};

describe('probes', () => {
  it('test each path just inside and just outside its prefix, and each CIDR at its edges', () => {
    const policy = {
      on_http_request: [
        {
          expressions: [
            "req.url.path.startsWith('/api/') && getReqHeader('x-team').exists(t, t == 'ops')",
          ],
          actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/24'] } }],
        },
        { actions: [{ type: 'deny' }] },
      ],
    };
    const probes = probesFor(URL_, [policy]);
    const urls = new Set(probes.map((p) => p.request.url));
    for (const p of ['/', '/api/', '/api/x', '/api']) expect(urls).toContain(`${URL_}${p}`);
    const ips = new Set(probes.map((p) => p.request.clientIp));
    for (const ip of ['10.0.0.0', '10.0.0.255', '9.255.255.255', '10.0.1.0'])
      expect(ips).toContain(ip);
    expect(probes.some((p) => p.request.headers?.['x-team']?.[0] === 'ops')).toBe(true);
    expect(probes.length).toBeLessThanOrEqual(MAX_PROBES);
  });

  it('probe addresses and headers only for the rules that differ, every guard path always', () => {
    const office = {
      expressions: ["req.url.path.startsWith('/admin')"],
      actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/24'] } }],
    };
    const app = (url: string) => ({ actions: [forward(url)] });
    const before = { on_http_request: [office, app('https://a.internal')] };
    const after = { on_http_request: [office, app('https://b.internal')] };
    const probes = probesFor(URL_, [before, after]);
    expect(probes.some((p) => p.request.url === `${URL_}/admin`)).toBe(true);
    expect(probes.some((p) => p.request.clientIp !== undefined)).toBe(false);
    // Dropping the restriction: its addresses are probed.
    const dropped = probesFor(URL_, [before, { on_http_request: [app('https://a.internal')] }]);
    expect(dropped.some((p) => p.request.clientIp === '10.0.0.255')).toBe(true);
  });

  it('CIDR edges in IPv6 too', () => {
    expect(cidrEdges(parseCidr('2001:db8::/127')!)).toEqual([
      '2001:db8:0:0:0:0:0:0',
      '2001:db8:0:0:0:0:0:1',
      '2001:db7:ffff:ffff:ffff:ffff:ffff:ffff',
      '2001:db8:0:0:0:0:0:2',
    ]);
  });
});

describe('the impact of a policy change', () => {
  it('lists what a removed login lets through, flagged, and nothing for an unchanged policy', () => {
    const impact = policyImpact(URL_, guarded, open);
    expect(impact.changes).toContainEqual({
      request: 'GET https://app.example.com/admin',
      before: 'oauth google',
      after: 'forwarded to https://admin.internal',
      weakened: 'without oauth',
    });
    // Just outside the prefix nothing changes.
    expect(impact.changes.map((c) => c.request)).not.toContain('GET https://app.example.com/admi');
    expect(policyImpact(URL_, guarded, guarded).changes).toEqual([]);
    // The reverse change protects: listed, not flagged.
    const back = policyImpact(URL_, open, guarded).changes;
    expect(back.length).toBeGreaterThan(0);
    expect(back.every((c) => c.weakened === undefined)).toBe(true);
  });

  it('runs the declared cases on both policies, named', () => {
    const admin: PolicyCase = {
      name: 'admin needs a login',
      request: { method: 'GET', url: `${URL_}/admin/users`, client_ip: '192.0.2.1' },
      expect: { auth: 'google' },
    };
    const impact = policyImpact(URL_, guarded, open, [admin]);
    expect(impact.changes[0]).toMatchObject({
      request:
        'GET https://app.example.com/admin/users from 192.0.2.1 (case "admin needs a login")',
      before: 'oauth google',
      after: 'forwarded to https://admin.internal',
    });
  });

  it('a rule only removed or only added: found where it fires, nowhere else', () => {
    const forward = (url: string) => ({ type: 'forward-internal', config: { url } });
    const rules = [
      // Sets a variable a later rule reads: where it runs, the rest decides otherwise.
      {
        name: 'tag',
        expressions: ["req.url.path.startsWith('/tag')"],
        actions: [{ type: 'set-vars', config: { vars: [{ tagged: 'yes' }] } }],
      },
      { name: 'broken', expressions: ["req.url.path == '/broken' && int('x') == 1"] },
      {
        name: 'tagged',
        expressions: ["has(vars.tagged) && vars.tagged == 'yes'"],
        actions: [forward('https://tagged.internal')],
      },
      {
        name: 'office',
        expressions: ["req.url.path.startsWith('/admin')"],
        actions: [{ type: 'restrict-ips', config: { allow: ['10.0.0.0/8'] } }],
      },
      { name: 'app', actions: [forward('https://app.internal')] },
    ];
    const doc = (keep: (i: number) => boolean) => ({
      on_http_request: rules.filter((_, i) => keep(i)),
    });
    // What the removed rule changes is found: the variable it set, the error it raised.
    const untagged = policyImpact(
      URL_,
      doc(() => true),
      doc((i) => i !== 0),
    ).changes;
    expect(untagged).toContainEqual(
      expect.objectContaining({
        request: 'GET https://app.example.com/tag',
        before: 'forwarded to https://tagged.internal',
        after: 'forwarded to https://app.internal',
      }),
    );
    const mended = policyImpact(
      URL_,
      doc(() => true),
      doc((i) => i !== 1),
    ).changes;
    expect(mended.map((c) => c.request)).toContain('GET https://app.example.com/broken');
    // Added, the same rules show the same changes the other way round; a rule whose guard holds
    // nowhere it is added changes nothing.
    const tagged = policyImpact(
      URL_,
      doc((i) => i !== 0),
      doc(() => true),
    ).changes;
    expect(tagged).toContainEqual(
      expect.objectContaining({
        request: 'GET https://app.example.com/tag',
        before: 'forwarded to https://app.internal',
        after: 'forwarded to https://tagged.internal',
      }),
    );
    const office = policyImpact(
      URL_,
      doc((i) => i !== 3),
      doc(() => true),
    ).changes;
    expect(office.length).toBeGreaterThan(0);
    expect(office.every((c) => c.request.includes('/admin'))).toBe(true);
  });
});

describe('the evaluator is pure', () => {
  it('imports no node: module', () => {
    const dir = path.join(import.meta.dirname, '../../../src/policy-eval');
    for (const file of readdirSync(dir)) {
      expect(readFileSync(path.join(dir, file), 'utf8'), file).not.toMatch(/from 'node:/);
    }
  });
});
