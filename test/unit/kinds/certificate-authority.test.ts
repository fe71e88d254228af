/**
 * The certificate authority kind: its manifest (PEM inline or from a file, checked as the
 * service checks it, located), its definition's fields (PEM compared with whitespace
 * normalised, replace-only), its plan through the generic planner, and `{ ref: NAME }` to it in
 * a cloud endpoint's `terminate-tls`, checked by validate.
 */
import { describe, expect, it } from 'vitest';
import { caPemProblem, normalisedPem } from '../../../src/hosted/ca-pem.js';
import { CERTIFICATE_AUTHORITY } from '../../../src/kinds/certificate-authority.js';
import type { Declared } from '../../../src/kinds/index.js';
import { KINDS, kindOfManifest } from '../../../src/kinds/index.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';
import { PlanContext } from '../../../src/plan/context.js';
import { planGenericKinds } from '../../../src/plan/generic.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { CA_PEM, LEAF_PEM, PUBLIC_KEY_PEM } from '../../helpers/ca-pems.js';
import { buildFrom, errorLines } from '../manifest/helpers.js';
import { desiredSet, endpointManifest, liveEndpoint, liveState } from '../plan/builders.js';

const indented = (pem: string, by = '  ') =>
  pem
    .trimEnd()
    .split('\n')
    .map((l) => `${by}${l}`)
    .join('\n');

const caDoc = (name: string, extra = '') =>
  `kind: CertificateAuthority\nname: ${name}\n${extra}ca_pem: |\n${indented(CA_PEM)}\n`;

const endpointNaming = (ca: string) => `kind: CloudEndpoint
name: app
url: https://app.example.com
traffic_policy:
  on_tcp_connect:
    - actions:
        - type: terminate-tls
          config:
            mutual_tls_certificate_authorities: [{ ref: ${ca} }, ca_2abc]
  on_http_request:
    - actions: [{ type: deny }]
`;

describe('the certificate authority PEM check', () => {
  it.each([
    ['a CA certificate', CA_PEM, undefined],
    ['no PEM at all', 'hello', 'holds no PEM block (-----BEGIN CERTIFICATE-----)'],
    [
      'two blocks',
      CA_PEM + CA_PEM,
      'holds 2 PEM blocks: a certificate authority is exactly one CERTIFICATE',
    ],
    ['a public key', PUBLIC_KEY_PEM, 'is a PUBLIC KEY block, not a CERTIFICATE'],
    [
      'a leaf certificate',
      LEAF_PEM,
      'is not a certificate authority (its basic constraints do not say CA:TRUE)',
    ],
    [
      'a broken body',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
      'is not a certificate that parses (X.509 in PEM)',
    ],
  ])('%s', (_, text, problem) => {
    expect(caPemProblem(text)).toBe(problem);
  });

  it('compares PEMs with their whitespace normalised (the service adds a trailing newline)', () => {
    const sent = CA_PEM.trimEnd();
    expect(normalisedPem(sent)).toBe(CA_PEM);
    expect(normalisedPem(`  ${CA_PEM.replaceAll('\n', '\r\n')}\n\n`)).toBe(CA_PEM);
    const pem = CERTIFICATE_AUTHORITY.fields?.find((f) => f.name === 'ca_pem');
    expect(pem?.replace).toBe(true);
    expect(pem?.createOnly).toBe(true);
    const declared = { ca_pem: sent } as unknown as Declared;
    expect(pem?.desired(declared, () => '')).toBe(pem?.live({ id: 'ca_1', ca_pem: CA_PEM }));
  });
});

describe('CertificateAuthority manifests', () => {
  it('is registered under its manifest kind, pruned, owned by the owner mark', () => {
    expect(kindOfManifest('CertificateAuthority')).toBe(CERTIFICATE_AUTHORITY);
    expect(KINDS).toContain(CERTIFICATE_AUTHORITY);
    expect(CERTIFICATE_AUTHORITY.ownership.by).toBe('metadata');
    expect(CERTIFICATE_AUTHORITY.prune).toBe(true);
    // An endpoint names CAs: a CA's delete waits for the endpoints' deletes.
    expect(kindOfManifest('CloudEndpoint')?.refersTo).toContain('certificate_authority');
  });

  it('loads a CA with its PEM inline or from a file (then sensitive), with its defaults', () => {
    const result = buildFrom(
      {
        'ca.yaml': caDoc('corp-ca', 'description: Corporate root\n'),
        'b.yaml': 'kind: CertificateAuthority\nname: b-ca\nca_pem: { file: corp-ca.pem }\n',
      },
      { refFiles: { 'corp-ca.pem': CA_PEM } },
    );
    expect(errorLines(result)).toEqual([]);
    if (!result.ok) return;
    expect(result.counts.certificate_authorities).toBe(2);
    expect(result.set.resources?.certificate_authority).toEqual([
      {
        kind: 'CertificateAuthority',
        name: 'b-ca',
        // A file's one trailing newline is dropped, as for every { file } reference.
        ca_pem: CA_PEM.trimEnd(),
        metadata: {},
        protect: false,
        ensure: 'present',
        source: { file: 'b.yaml', line: 1, column: 1 },
        sensitive: [['ca_pem']],
      },
      {
        kind: 'CertificateAuthority',
        name: 'corp-ca',
        ca_pem: CA_PEM,
        description: 'Corporate root',
        metadata: {},
        protect: false,
        ensure: 'present',
        source: { file: 'ca.yaml', line: 1, column: 1 },
        sensitive: [],
      },
    ]);
  });

  it('refuses a PEM that is no CA, and an ID of another kind, located, never quoting the PEM', () => {
    const result = buildFrom(
      {
        'leaf.yaml': `kind: CertificateAuthority\nname: leaf\nid: edghts_1\nca_pem: |\n${indented(LEAF_PEM)}\n`,
        'key.yaml': 'kind: CertificateAuthority\nname: key\nca_pem: { file: key.pem }\n',
      },
      { refFiles: { 'key.pem': PUBLIC_KEY_PEM } },
    );
    const lines = errorLines(result);
    expect(lines).toEqual([
      'key.yaml:3:9: ca_pem: is a PUBLIC KEY block, not a CERTIFICATE',
      'leaf.yaml:3:5: id: must be a certificate authority ID (ca_...)',
      'leaf.yaml:4:9: ca_pem: is not a certificate authority (its basic constraints do not say CA:TRUE)',
    ]);
    expect(lines.join('\n')).not.toContain('MII');
  });

  it('accepts { ref: NAME } in terminate-tls authorities when a CertificateAuthority of that name is declared', () => {
    const result = buildFrom({
      'ca.yaml': caDoc('corp-ca'),
      'app.yaml': endpointNaming('corp-ca'),
    });
    expect(errorLines(result)).toEqual([]);
    if (!result.ok) return;
    const policy = result.set.cloudEndpoints[0]?.traffic_policy as {
      on_tcp_connect: { actions: { config: Record<string, unknown> }[] }[];
    };
    const config = policy.on_tcp_connect[0]?.actions[0]?.config;
    expect(config?.mutual_tls_certificate_authorities).toEqual([{ ref: 'corp-ca' }, 'ca_2abc']);
  });

  it('refuses a reference to no declared CertificateAuthority (or one declared absent), located at the item', () => {
    const absent = buildFrom({
      'ca.yaml': caDoc('corp-ca', 'ensure: absent\n'),
      'app.yaml': endpointNaming('corp-ca'),
    });
    const missing = buildFrom({ 'app.yaml': endpointNaming('nope') });
    const message = (name: string) =>
      `app.yaml:9:50: traffic_policy.on_tcp_connect[0].actions[0].config.mutual_tls_certificate_authorities[0]: refers to CertificateAuthority "${name}", which no manifest declares`;
    expect(errorLines(absent)).toEqual([message('corp-ca')]);
    expect(errorLines(missing)).toEqual([message('nope')]);
  });

  it('refuses a malformed reference item', () => {
    const result = buildFrom({
      'app.yaml': endpointNaming('corp-ca').replace('{ ref: corp-ca }', '{ ref: "", other: 1 }'),
    });
    expect(result.ok).toBe(false);
  });
});

describe('the plan of a certificate authority (generic planner)', () => {
  const declared = (fields: Record<string, unknown> = {}): Declared => ({
    kind: 'CertificateAuthority',
    name: 'corp-ca',
    ca_pem: CA_PEM.trimEnd(),
    metadata: {},
    source: { file: 'ca.yaml', line: 1, column: 1 },
    sensitive: [],
    ...fields,
  });
  const mark = storedMetadata({}, { owner: 'default', name: 'corp-ca', protect: false });
  const plan = (d: Declared[], live: Record<string, unknown>[]) => {
    const ctx = new PlanContext({});
    planGenericKinds(
      ctx,
      {
        tlsEdges: [],
        httpsEdges: [],
        botUsers: [],
        cloudEndpoints: [],
        resources: { certificate_authority: d },
      },
      { resources: { certificate_authority: live.map((l, i) => ({ id: `ca_${i}`, ...l })) } },
      [CERTIFICATE_AUTHORITY],
    );
    return ctx.changes;
  };

  it('creates one with its PEM, description and the owner mark', () => {
    const [c] = plan([declared()], []);
    expect(c?.action).toBe('create');
    expect(c?.operations.map((o) => [o.method, o.path, o.body])).toEqual([
      ['POST', '/certificate_authorities', { ca_pem: CA_PEM, description: '', metadata: mark }],
    ]);
  });

  it('is up to date when the live PEM differs only by whitespace', () => {
    const [c] = plan([declared()], [{ ca_pem: CA_PEM, metadata: mark }]);
    expect(c?.action).toBe('noop');
  });

  it('updates the description in place, and replaces it for a new PEM', () => {
    const live = [{ ca_pem: CA_PEM, metadata: mark }];
    const [update] = plan([declared({ description: 'root' })], live);
    expect(update?.operations.map((o) => [o.method, o.path, o.body])).toEqual([
      ['PATCH', '/certificate_authorities/ca_0', { description: 'root' }],
    ]);
    const other = CA_PEM.replace('MIIB0jCC', 'MIIB0jCD');
    const [replace] = plan([declared({ ca_pem: other })], live);
    expect(replace?.action).toBe('replace');
    expect(replace?.operations.map((o) => `${o.method} ${o.path}`)).toEqual([
      'DELETE /certificate_authorities/ca_0',
      'POST /certificate_authorities',
    ]);
  });

  it('adopts a hand-made one by id with one PATCH writing the owner mark', () => {
    const [c] = plan([declared({ id: 'ca_0' })], [{ ca_pem: CA_PEM }]);
    expect(c?.action).toBe('adopt');
    expect(c?.operations.map((o) => [o.method, o.body])).toEqual([['PATCH', { metadata: mark }]]);
  });

  it('prunes one no manifest keeps, and deletes one declared absent', () => {
    const pruned = plan([], [{ ca_pem: CA_PEM, metadata: mark }]);
    expect(pruned.map((c) => [c.address, c.action])).toEqual([
      ['certificate_authority.corp-ca', 'delete'],
    ]);
    const absent = plan([declared({ ensure: 'absent' })], [{ ca_pem: CA_PEM, metadata: mark }]);
    expect(absent.map((c) => c.operations.map((o) => `${o.method} ${o.path}`))).toEqual([
      ['DELETE /certificate_authorities/ca_0'],
    ]);
  });
});

describe('an endpoint naming a CA (the whole plan)', () => {
  const policyNaming = (ca: unknown) => ({
    on_tcp_connect: [
      {
        actions: [{ type: 'terminate-tls', config: { mutual_tls_certificate_authorities: [ca] } }],
      },
    ],
    on_http_request: [{ actions: [{ type: 'deny' }] }],
  });
  const ca = (pem: string): Declared => ({
    kind: 'CertificateAuthority',
    name: 'corp-ca',
    ca_pem: pem,
    metadata: {},
    source: { file: 'ca.yaml', line: 1, column: 1 },
    sensitive: [],
  });
  const endpoint = endpointManifest({
    name: 'app',
    url: 'https://app.example.com',
    traffic_policy: policyNaming({ ref: 'corp-ca' }),
  });
  const desired = (pem: string) => ({
    ...desiredSet({ endpoints: [endpoint] }),
    resources: { certificate_authority: [ca(pem)] },
  });
  const live = {
    ...liveState({
      endpoints: [
        liveEndpoint({
          url: 'https://app.example.com',
          name: 'app',
          traffic_policy: JSON.stringify(policyNaming('ca_old')),
        }),
      ],
    }),
    resources: {
      certificate_authority: [
        {
          id: 'ca_old',
          ca_pem: CA_PEM,
          metadata: storedMetadata({}, { owner: 'default', name: 'corp-ca', protect: false }),
        },
      ],
    },
  };

  it('sends the live ID of the CA it names, and changes nothing when it is up to date', () => {
    const plan = buildPlan(desired(CA_PEM), live);
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'noop certificate_authority.corp-ca',
      'noop cloud_endpoint.app',
    ]);
  });

  it('a CA replaced (a new PEM): the endpoint names the new one, its PATCH after the POST fills it', () => {
    const other = CA_PEM.replace('MIIB0jCC', 'MIIB0jCD');
    const plan = buildPlan(desired(other), live);
    expect(plan.changes.map((c) => `${c.action} ${c.address}`)).toEqual([
      'replace certificate_authority.corp-ca',
      'update cloud_endpoint.app',
    ]);
    const patch = plan.changes[1]?.operations[0];
    expect(patch?.after).toEqual(['certificate_authority.corp-ca']);
    expect(patch?.fills).toEqual([['traffic_policy']]);
    expect(JSON.stringify(patch?.body)).toContain('{created:certificate_authority.corp-ca}');
  });
});
