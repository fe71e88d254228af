import { describe, expect, it } from 'vitest';
import { parseCaPem } from '../../../src/server/ca-pem.js';
import {
  domainFor,
  domainNameViolation,
  isServiceSubdomain,
  overlaps,
} from '../../../src/server/domain-names.js';
import type { ReservedDomainRec } from '../../../src/server/model.js';
import { Store } from '../../../src/server/store.js';
import { CA_PEM } from '../../helpers/ca-pems.js';

describe('domain names', () => {
  it.each([
    ['app.example.com', undefined],
    ['*.example.com', undefined],
    ['xn--bcher-kva.example.com', undefined],
    ['app.example.com.', 'ERR_SVC_408'],
    ['a..b.com', 'ERR_SVC_409'],
    ['app.ex_ample.com', 'ERR_SVC_438'],
    ['example', 'ERR_SVC_448'],
    ['*.com', 'ERR_SVC_448'],
    ['*.co.uk', 'ERR_SVC_448'],
    ['app.local', 'ERR_SVC_411'],
    ['app.123', 'ERR_SVC_411'],
    ['**.example.com', 'ERR_SVC_403'],
    ['a.*', 'ERR_SVC_402'],
  ])('%s: %s', (name, code) => {
    expect(domainNameViolation(name)?.code).toBe(code);
  });

  const domains = [
    { domain: 'example.com' },
    { domain: '*.example.com' },
    { domain: '*.b.example.com' },
  ];

  it.each([
    ['example.com', 'example.com'],
    ['a.example.com', '*.example.com'],
    ['a.b.example.com', '*.b.example.com'],
    ['*.example.com', '*.example.com'],
    ['*.c.example.com', undefined],
    ['example.org', undefined],
  ])('%s is served by %s', (host, expected) => {
    expect(domainFor(host, domains)?.domain).toBe(expected);
  });

  it('tells overlapping names (for two accounts) and the service own domains', () => {
    expect(overlaps('a.example.com', 'example.com')).toBe(true);
    expect(overlaps('example.com', 'a.example.com')).toBe(true);
    expect(overlaps('*.example.com', 'example.com')).toBe(true);
    expect(overlaps('a.example.com', 'b.example.com')).toBe(false);
    expect(overlaps('example.com', 'myexample.com')).toBe(false);
    expect(isServiceSubdomain('app.svc.app')).toBe(true);
    expect(isServiceSubdomain('*.app.svc.dev')).toBe(true);
    expect(isServiceSubdomain('svc.app')).toBe(false);
    expect(isServiceSubdomain('app.notsvc.app')).toBe(false);
  });
});

describe('CA PEMs', () => {
  it('reads the key usages, and keeps the block alone with a trailing newline', () => {
    const fields = parseCaPem(`junk before\n${CA_PEM.trimEnd()}\r\n`);
    expect(fields.ca_pem).toBe(CA_PEM);
    expect(fields.key_usages).toEqual(['digital_signature', 'cert_sign', 'crl_sign']);
    expect(fields.extended_key_usages).toEqual(['server_auth', 'client_auth']);
  });
});

describe('the store with account resources', () => {
  it('snapshots and loads reserved domains and CAs', () => {
    const store = new Store();
    const domain: ReservedDomainRec = {
      id: 'rd_1',
      created_at: '2024-01-01T00:00:00Z',
      domain: 'app.example.com',
      description: '',
      metadata: '',
      cname_target: 'x.cname-target.svc.dev',
      acme_challenge_cname_target: null,
      certificate: null,
      certificate_uploaded: false,
      certificate_management_policy: { authority: 'letsencrypt', private_key_type: 'ecdsa' },
      certificate_management_status: null,
      resolves_to: [{ value: 'global' }],
    };
    const ca = {
      id: 'ca_1',
      created_at: '2024-01-01T00:00:00Z',
      description: '',
      metadata: '',
      ...parseCaPem(CA_PEM),
    };
    store.apply({ t: 'put', k: 'domain', a: 'acct', r: domain });
    store.apply({ t: 'put', k: 'ca', a: 'acct', r: ca });
    const copy = new Store();
    copy.load(JSON.parse(JSON.stringify(store.snapshot())));
    expect([...copy.account('acct').domains.values()]).toEqual([domain]);
    expect([...copy.account('acct').cas.values()]).toEqual([ca]);
    expect([...copy.ids()].sort()).toEqual(['ca_1', 'rd_1']);
    copy.apply({ t: 'del', k: 'domain', a: 'acct', id: 'rd_1' });
    expect(copy.account('acct').domains.size).toBe(0);
  });
});
