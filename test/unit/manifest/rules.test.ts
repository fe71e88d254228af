/**
 * One failing case (at least) per validation rule, each asserting the exact diagnostic lines:
 * file, line, column, field path and message. Runs the pure pipeline on in-memory files.
 */

import { describe, expect, it } from 'vitest';
import { MANIFEST_KIND_NAMES } from '../../../src/manifest/schema.js';
import { buildFrom, errorLines, type MemoryOptions } from './helpers.js';

/** Every manifest kind, as the loader's messages list them. */

interface Case {
  readonly rule: string;
  readonly files: Record<string, string>;
  readonly expected: string[];
  readonly options?: MemoryOptions;
}

/** 253 characters: four labels (63, 63, 63, 61) and three dots. */
const HOST_253 = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(61)}`;

const route = (extra: string) => `kind: HTTPSEdge
name: shop
routes:
  - match_type: path_prefix
    match: /
${extra}`;

/** Every manifest kind the loader accepts, as its messages list them. */
const KIND_NAMES = MANIFEST_KIND_NAMES.join(', ');

const cases: Case[] = [
  // ---- shape: names, kinds, unknown fields -----------------------------------------------------
  {
    rule: 'kind is required',
    files: { 'a.yaml': 'name: x\n' },
    expected: [`a.yaml:1:1: missing "kind" (one of ${KIND_NAMES})`],
  },
  // ---- IP policies: ranges as the service takes them, references by name --------------------
  {
    rule: 'an IP rule not written with its lowest address, with the hint; a missing mask',
    files: {
      'ipp.yaml':
        'kind: IPPolicy\nname: office\nrules:\n  - { cidr: 10.1.2.3/8, action: allow }\n  - { cidr: 10.0.0.1, action: deny }\n',
    },
    expected: [
      'ipp.yaml:4:13: rules[0].cidr: cidr "10.1.2.3/8" is not written with its range\'s lowest address: did you mean `10.0.0.0/8`?',
      'ipp.yaml:5:13: rules[1].cidr: cidr "10.0.0.1" has no mask: write 10.0.0.1/32 for this one address',
    ],
  },
  {
    rule: 'the same range twice in one IP policy',
    files: {
      'ipp.yaml':
        'kind: IPPolicy\nname: office\nrules:\n  - { cidr: 2001:db8::/32, action: allow }\n  - { cidr: 2001:DB8::/32, action: deny }\n',
    },
    expected: [
      'ipp.yaml:5:13: rules[1].cidr: cidr 2001:DB8::/32 is already a rule of this policy (rules[0]): one rule per range, whatever its action',
    ],
  },
  {
    rule: 'restrict-ips naming an IPPolicy no manifest declares',
    files: {
      'ipp.yaml': 'kind: IPPolicy\nname: office\n',
      'ep.yaml':
        'kind: CloudEndpoint\nname: app\nurl: https://app.example.com\ntraffic_policy:\n  on_http_request:\n    - actions:\n        - type: restrict-ips\n          config: { ip_policies: [{ ref: ofice }] }\n    - actions: [{ type: deny }]\n',
    },
    expected: [
      'ep.yaml:8:35: traffic_policy.on_http_request[0].actions[0].config.ip_policies[0]: refers to IPPolicy "ofice", which no manifest declares; did you mean "office"?',
    ],
  },
  {
    rule: 'unknown kind, with a suggestion',
    files: { 'a.yaml': 'kind: HttpsEdge\nname: x\n' },
    expected: ['a.yaml:1:7: kind: unknown kind "HttpsEdge"; did you mean "HTTPSEdge"?'],
  },
  {
    rule: 'a document must be a mapping',
    files: { 'a.yaml': '- kind: TLSEdge\n' },
    expected: [
      `a.yaml:1:1: a manifest document must be a mapping with a "kind" (one of ${KIND_NAMES})`,
    ],
  },
  {
    rule: 'name pattern',
    files: { 'a.yaml': 'kind: TLSEdge\nname: Web_Shop\n' },
    expected: [
      'a.yaml:2:7: name: names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
    ],
  },
  {
    rule: 'name is required',
    files: { 'a.yaml': 'kind: BotUser\nactive: true\n' },
    expected: ['a.yaml:1:1: name: required field is missing'],
  },
  {
    rule: 'unknown field with "did you mean"',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nhostport: [a.example.com:443]\n' },
    expected: ['a.yaml:3:1: unknown field "hostport"; did you mean "hostports"?'],
  },
  {
    rule: 'unknown nested field with "did you mean"',
    files: { 'a.yaml': route('    backend: { backend_id: bkdhr_1, enable: false }\n') },
    expected: ['a.yaml:6:37: routes[0].backend: unknown field "enable"; did you mean "enabled"?'],
  },
  {
    rule: 'read-shape field names point at the write shape',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nip_restriction:\n  ip_policies: [ipp_1]\n' },
    expected: [
      'a.yaml:4:3: ip_restriction: unknown field "ip_policies"; manifests use the API\'s write shapes: "ip_policy_ids"',
      'a.yaml:4:3: ip_restriction.ip_policy_ids: required field is missing',
    ],
  },
  {
    rule: 'route modules do not go on an HTTPS edge itself',
    files: { 'a.yaml': 'kind: HTTPSEdge\nname: x\nbackend: { backend_id: bkdhr_1 }\n' },
    expected: [
      'a.yaml:3:1: backend belongs on a route: an HTTPS edge itself carries only mutual_tls and tls_termination',
    ],
  },
  {
    rule: 'TLS edges have no routes',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nroutes: []\n' },
    expected: ['a.yaml:3:1: TLS edges have no routes (use an HTTPSEdge)'],
  },
  {
    rule: 'bot users carry no metadata',
    files: { 'a.yaml': 'kind: BotUser\nname: ci\nmetadata: { a: b }\n' },
    expected: ['a.yaml:3:1: service users carry no metadata'],
  },
  {
    rule: 'wrong type, in YAML terms',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nhostports: a.example.com:443\n' },
    expected: ['a.yaml:3:12: hostports: expected a list, got a string'],
  },
  {
    rule: 'enabled must be a boolean',
    files: { 'a.yaml': route('    compression: { enabled: "yes" }\n') },
    expected: ['a.yaml:6:29: routes[0].compression.enabled: expected true or false, got a string'],
  },
  // ---- hostports -----------------------------------------------------------------------------
  {
    rule: 'hostport well-formed',
    files: {
      'a.yaml': 'kind: TLSEdge\nname: x\nhostports: [a.example.com, "b.example.com:70000"]\n',
    },
    expected: [
      'a.yaml:3:13: hostports[0]: "a.example.com" is not of the form hostname:portnumber',
      'a.yaml:3:28: hostports[1]: port 70000 is out of range 1..65535',
    ],
  },
  {
    rule: 'a port has no leading zeros (one address, one spelling)',
    files: {
      'a.yaml':
        'kind: TLSEdge\nname: x\nhostports: [a.example.com:443, a.example.com:0443, "a.example.com:00443"]\n',
    },
    expected: [
      'a.yaml:3:32: hostports[1]: "a.example.com:0443" is not of the form hostname:portnumber (a port number has no leading zeros)',
      'a.yaml:3:52: hostports[2]: "a.example.com:00443" is not of the form hostname:portnumber (a port number has no leading zeros)',
    ],
  },
  {
    rule: 'a host name has at most 253 characters',
    files: {
      'a.yaml': `kind: TLSEdge\nname: x\nhostports: [${HOST_253}:443, ${HOST_253}x:443]\n`,
    },
    expected: [
      `a.yaml:3:${13 + HOST_253.length + 6}: hostports[1]: "${HOST_253}x:443" is not of the form hostname:portnumber (a host name has at most 253 characters)`,
    ],
  },
  // ---- rules of the hosted service (api-notes' last section) ---------------------------------
  {
    rule: 'a domain hostport uses port 443; an IP address may use any port',
    files: {
      'a.yaml':
        'kind: TLSEdge\nname: x\nhostports: [db.example.com:5432, "*.example.com:8443", 10.0.0.1:5432]\n',
    },
    expected: [
      'a.yaml:3:13: hostports[0]: the domain db.example.com is unsupported because it does not use port 443 (only IP addresses may use other ports)',
      'a.yaml:3:34: hostports[1]: the domain *.example.com is unsupported because it does not use port 443 (only IP addresses may use other ports)',
    ],
  },
  {
    rule: 'mutual_tls needs TLS terminated at the edge',
    files: {
      'a.yaml':
        'kind: TLSEdge\nname: x\ntls_termination: { terminate_at: upstream }\nmutual_tls: { certificate_authority_ids: [ca_1] }\n',
    },
    expected: [
      'a.yaml:4:1: mutual_tls may not be enabled when TLS is not terminated at the edge (terminate_at: upstream)',
    ],
  },
  {
    rule: 'at most one route of an edge carries an auth module',
    files: {
      'a.yaml': `kind: HTTPSEdge
name: shop
routes:
  - { match_type: path_prefix, match: /a, oauth: { provider: { google: {} } } }
  - { match_type: path_prefix, match: /b }
  - { match_type: path_prefix, match: /c, saml: { idp_metadata: "<x/>" } }
`,
    },
    expected: [
      'a.yaml:6:43: routes[2]: enabling OAuth, OIDC, or SAML on more than one route is not supported (2 routes of this edge have one); the first is at a.yaml:4:50',
    ],
  },
  {
    rule: 'cookie_prefix: letters, digits and periods',
    files: { 'a.yaml': route('    oauth: { provider: { google: {} }, cookie_prefix: my-app_ }\n') },
    expected: [
      'a.yaml:6:55: routes[0].oauth.cookie_prefix: cookie_prefix "my-app_" may contain only letters, digits and periods',
    ],
  },
  {
    rule: 'a circuit breaker carries every field the service needs',
    files: {
      'a.yaml': route(
        '    circuit_breaker: { num_buckets: 10, error_threshold_percentage: 0.5 }\n',
      ),
    },
    expected: [
      'a.yaml:6:22: routes[0].circuit_breaker.rolling_window: rolling_window is required and must be greater than 0 (the service stores a missing field as 0, which is invalid)',
      'a.yaml:6:22: routes[0].circuit_breaker.tripped_duration: tripped_duration is required and must be greater than 0 (the service stores a missing field as 0, which is invalid)',
      'a.yaml:6:22: routes[0].circuit_breaker.volume_threshold: volume_threshold is required and must be greater than 0 (the service stores a missing field as 0, which is invalid)',
    ],
  },
  {
    rule: 'header values without control characters',
    files: {
      'a.yaml': route(
        '    request_headers: { add: { X-A: "a\\tb", X-B: "ok" } }\n    response_headers: { add: { X-C: "\\e[2J" } }\n',
      ),
    },
    expected: [
      'a.yaml:6:36: routes[0].request_headers.add["X-A"]: header values may not contain CR, LF or other control characters',
      'a.yaml:7:37: routes[0].response_headers.add["X-C"]: header values may not contain CR, LF or other control characters',
    ],
  },
  {
    rule: "webhook providers: exactly the service's list",
    files: {
      'a.yaml': route('    webhook_verification: { provider: hosted_hooks, secret: s }\n'),
      'b.yaml': route('    webhook_verification: { provider: Heroku, secret: s }\n').replace(
        'shop',
        'shop2',
      ),
    },
    expected: [
      'a.yaml:6:39: routes[0].webhook_verification.provider: unknown webhook provider "hosted_hooks"; did you mean "hostedhooks"?',
    ],
  },
  {
    rule: 'hostport unique within an edge (case-insensitive)',
    files: {
      'a.yaml': 'kind: TLSEdge\nname: x\nhostports: [a.example.com:443, A.example.com:443]\n',
    },
    expected: ['a.yaml:3:32: hostports[1]: duplicate entry "A.example.com:443"'],
  },
  {
    rule: 'hostport unique across all edges and kinds',
    files: {
      'a.yaml': 'kind: TLSEdge\nname: x\nhostports: [a.example.com:443]\n',
      'b.yaml': 'kind: HTTPSEdge\nname: y\nhostports:\n  - a.example.com:443\n',
    },
    expected: [
      'b.yaml:4:5: hostports[0]: hostport "a.example.com:443" is already served by TLSEdge "x" (a.yaml:3:13)',
    ],
  },
  // ---- names and ids -------------------------------------------------------------------------
  {
    rule: 'names unique per kind',
    files: {
      'a.yaml': 'kind: HTTPSEdge\nname: shop\n---\nkind: TLSEdge\nname: shop\n',
      'b.yaml': 'kind: HTTPSEdge\nname: shop\n',
    },
    expected: ['b.yaml:2:7: name: duplicate HTTPSEdge name "shop" (first defined at a.yaml:2:7)'],
  },
  {
    rule: 'bot user names unique',
    files: { 'a.yaml': 'kind: BotUser\nname: ci\n---\nkind: BotUser\nname: ci\n' },
    expected: ['a.yaml:5:7: name: duplicate BotUser name "ci" (first defined at a.yaml:2:7)'],
  },
  {
    rule: 'TLS edge id prefix',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nid: edghts_2abc\n' },
    expected: ['a.yaml:3:5: id: must be a TLS edge ID (edgtls_...)'],
  },
  {
    rule: 'HTTPS edge id prefix',
    files: { 'a.yaml': 'kind: HTTPSEdge\nname: x\nid: edgtls_2abc\n' },
    expected: ['a.yaml:3:5: id: must be an HTTPS edge ID (edghts_...)'],
  },
  {
    rule: 'one edge adopted once',
    files: {
      'a.yaml':
        'kind: TLSEdge\nname: x\nid: edgtls_2abc\n---\nkind: TLSEdge\nname: y\nid: edgtls_2abc\n',
    },
    expected: ['a.yaml:7:5: id: edge ID "edgtls_2abc" is already adopted at a.yaml:3:5'],
  },
  // ---- ID prefixes of references -------------------------------------------------------------
  {
    rule: 'backend_id prefix',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nbackend: { backend_id: ipp_2abc }\n' },
    expected: [
      'a.yaml:3:24: backend.backend_id: must be a backend ID (bkd..._...), e.g. bkdhr_2abc...',
    ],
  },
  {
    rule: 'ip_policy_ids prefix',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nip_restriction: { ip_policy_ids: [ca_2abc] }\n' },
    expected: ['a.yaml:3:35: ip_restriction.ip_policy_ids[0]: must be an IP policy ID (ipp_...)'],
  },
  {
    rule: 'ip_policy_ids not empty',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nip_restriction: { ip_policy_ids: [] }\n' },
    expected: ['a.yaml:3:34: ip_restriction.ip_policy_ids: at least one IP policy ID is required'],
  },
  {
    rule: 'certificate_authority_ids prefix',
    files: {
      'a.yaml': 'kind: HTTPSEdge\nname: x\nmutual_tls: { certificate_authority_ids: [ipp_2abc] }\n',
    },
    expected: [
      'a.yaml:3:43: mutual_tls.certificate_authority_ids[0]: must be a certificate authority ID (ca_...)',
    ],
  },
  // ---- TLS termination -----------------------------------------------------------------------
  {
    rule: 'min_version absent under terminate_at: upstream',
    files: {
      'a.yaml':
        'kind: TLSEdge\nname: x\ntls_termination:\n  terminate_at: upstream\n  min_version: "1.2"\n',
    },
    expected: [
      'a.yaml:5:16: tls_termination.min_version: min_version must not be set when terminate_at is "upstream" (TLS is not terminated here)',
    ],
  },
  {
    rule: 'terminate_at not allowed on HTTPS edges',
    files: { 'a.yaml': 'kind: HTTPSEdge\nname: x\ntls_termination:\n  terminate_at: edge\n' },
    expected: [
      'a.yaml:4:3: tls_termination: terminate_at is not allowed on HTTPS edges: they always terminate TLS at the edge',
    ],
  },
  {
    rule: 'terminate_at enum',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\ntls_termination: { terminate_at: origin }\n' },
    expected: [
      'a.yaml:3:34: tls_termination.terminate_at: must be one of "edge", "agent", "upstream"',
    ],
  },
  {
    rule: 'min_version enum, with a hint for unquoted numbers',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\ntls_termination: { min_version: 1.3 }\n' },
    expected: [
      'a.yaml:3:33: tls_termination.min_version: must be one of "1.0", "1.1", "1.2", "1.3"; quote it to make it a string: "1.3"',
    ],
  },
  // ---- routes --------------------------------------------------------------------------------
  {
    rule: 'match_type enum',
    files: {
      'a.yaml': 'kind: HTTPSEdge\nname: x\nroutes:\n  - match_type: prefix\n    match: /\n',
    },
    expected: ['a.yaml:4:17: routes[0].match_type: must be one of "exact_path", "path_prefix"'],
  },
  {
    rule: 'match starts with /',
    files: {
      'a.yaml': 'kind: HTTPSEdge\nname: x\nroutes:\n  - match_type: exact_path\n    match: api\n',
    },
    expected: ['a.yaml:5:12: routes[0].match: must start with "/"'],
  },
  {
    rule: 'match unique per edge',
    files: {
      'a.yaml':
        'kind: HTTPSEdge\nname: x\nroutes:\n  - match_type: exact_path\n    match: /a\n  - match_type: path_prefix\n    match: /a\n',
    },
    expected: [
      'a.yaml:7:12: routes[1].match: duplicate route match "/a" on this edge (first at a.yaml:5:12)',
    ],
  },
  {
    rule: 'the same match on two edges is fine, but a wrong route field is not',
    files: {
      'a.yaml':
        'kind: HTTPSEdge\nname: x\nroutes:\n  - { match_type: exact_path, match: /a }\n---\nkind: HTTPSEdge\nname: y\nroutes:\n  - { match_type: exact_path, match: /a, matches: /b }\n',
    },
    expected: ['a.yaml:9:42: routes[0]: unknown field "matches"; did you mean "match"?'],
  },
  {
    rule: 'description at most 255 bytes (UTF-8)',
    files: { 'a.yaml': `kind: TLSEdge\nname: x\ndescription: ${'é'.repeat(128)}\n` },
    expected: ['a.yaml:3:14: description: must be at most 255 bytes (UTF-8)'],
  },
  // ---- metadata ------------------------------------------------------------------------------
  {
    rule: 'edgesync/ label prefix reserved',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nmetadata:\n  edgesync/owner: someone\n' },
    expected: [
      'a.yaml:4:3: metadata: label prefix "edgesync/" is reserved for edgesync\'s own keys',
    ],
  },
  {
    rule: 'reserved label prefix on routes too',
    files: { 'a.yaml': route('    metadata: { edgesync/x: y }\n') },
    expected: [
      'a.yaml:6:17: routes[0].metadata: label prefix "edgesync/" is reserved for edgesync\'s own keys',
    ],
  },
  {
    rule: 'stored metadata (labels plus edgesync keys) at most 4096 bytes',
    files: { 'a.yaml': `kind: TLSEdge\nname: x\nmetadata:\n  notes: ${'n'.repeat(4038)}\n` },
    expected: [
      "a.yaml:4:3: metadata: stored metadata would be 4097 bytes (labels plus edgesync's own keys); the limit is 4096",
    ],
  },
  {
    rule: 'the owner id counts towards the metadata limit',
    files: { 'a.yaml': `kind: TLSEdge\nname: x\nmetadata:\n  notes: ${'n'.repeat(4030)}\n` },
    options: { owner: 'platform-team-eu' },
    expected: [
      "a.yaml:4:3: metadata: stored metadata would be 4098 bytes (labels plus edgesync's own keys); the limit is 4096",
    ],
  },
  {
    rule: 'label keys',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nmetadata: { "bad key": v }\n' },
    expected: [
      'a.yaml:3:13: metadata["bad key"]: invalid key: label keys must be 1-128 characters of letters, digits, ".", "_", "-" and "/", starting and ending with a letter or digit',
    ],
  },
  {
    rule: 'labels are strings',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nmetadata: { replicas: 3 }\n' },
    expected: [
      'a.yaml:3:23: metadata.replicas: expected a string, got a number; quote it to make it a string: "3"',
    ],
  },
  // ---- auth ----------------------------------------------------------------------------------
  {
    rule: 'at most one of oauth, oidc, saml per route',
    files: {
      'a.yaml': route(
        '    oauth: { provider: { google: {} } }\n    saml: { idp_metadata: "<xml/>" }\n',
      ),
    },
    expected: [
      'a.yaml:7:5: routes[0]: at most one of oauth, oidc and saml may be set on a route; this route also sets oauth',
    ],
  },
  {
    rule: 'exactly one OAuth provider (none)',
    files: { 'a.yaml': route('    oauth:\n      provider: {}\n') },
    expected: [
      'a.yaml:7:17: routes[0].oauth.provider: exactly one provider must be set (one of github, facebook, microsoft, google, linkedin, gitlab, twitch, amazon)',
    ],
  },
  {
    rule: 'exactly one OAuth provider (two)',
    files: {
      'a.yaml': route('    oauth:\n      provider:\n        github: {}\n        google: {}\n'),
    },
    expected: [
      'a.yaml:8:9: routes[0].oauth.provider: exactly one provider must be set, got github and google',
    ],
  },
  {
    rule: 'unknown OAuth provider',
    files: { 'a.yaml': route('    oauth:\n      provider:\n        gogle: {}\n') },
    expected: [
      'a.yaml:8:9: routes[0].oauth.provider: unknown field "gogle"; did you mean "google"?',
    ],
  },
  {
    rule: 'client_id needs client_secret',
    files: {
      'a.yaml': route('    oauth:\n      provider:\n        google:\n          client_id: abc\n'),
    },
    expected: [
      'a.yaml:9:22: routes[0].oauth.provider.google.client_id: client_secret is required when client_id is set',
    ],
  },
  {
    rule: 'client_secret needs client_id',
    files: {
      'a.yaml': route(
        '    oauth:\n      provider:\n        google:\n          client_secret: s3\n',
      ),
    },
    expected: [
      'a.yaml:9:26: routes[0].oauth.provider.google.client_secret: client_id is required when client_secret is set',
    ],
  },
  {
    rule: 'scopes only with client_id and client_secret',
    files: {
      'a.yaml': route(
        '    oauth:\n      provider:\n        github:\n          scopes: [read:org]\n',
      ),
    },
    expected: [
      'a.yaml:9:19: routes[0].oauth.provider.github.scopes: scopes need your own OAuth application: set client_id and client_secret (the managed application takes no scopes)',
    ],
  },
  {
    rule: 'teams and organizations are github-only',
    files: {
      'a.yaml': route('    oauth:\n      provider:\n        gitlab:\n          teams: [a/b]\n'),
    },
    expected: [
      'a.yaml:9:11: routes[0].oauth.provider.gitlab: teams is accepted only by the github provider',
    ],
  },
  {
    rule: 'emails lower-case',
    files: {
      'a.yaml': route(
        '    oauth:\n      provider:\n        google:\n          email_addresses: [Ann@example.com]\n',
      ),
    },
    expected: [
      'a.yaml:9:29: routes[0].oauth.provider.google.email_addresses[0]: email addresses must be lower-case',
    ],
  },
  {
    rule: 'list entries unique',
    files: {
      'a.yaml': route(
        '    oauth:\n      provider:\n        google:\n          email_domains: [example.com, example.com]\n',
      ),
    },
    expected: [
      'a.yaml:9:40: routes[0].oauth.provider.google.email_domains[1]: duplicate entry "example.com"',
    ],
  },
  {
    rule: 'uint32 bounds',
    files: {
      'a.yaml': route(
        '    oauth:\n      provider: { google: {} }\n      inactivity_timeout: 4294967296\n      maximum_duration: -1\n',
      ),
    },
    expected: [
      'a.yaml:8:27: routes[0].oauth.inactivity_timeout: must be at most 4294967295 (uint32)',
      'a.yaml:9:25: routes[0].oauth.maximum_duration: must be at least 0',
    ],
  },
  {
    rule: 'saml idp_metadata required and nameid_format enum',
    files: {
      'a.yaml': route('    saml:\n      nameid_format: email\n'),
    },
    expected: [
      'a.yaml:7:7: routes[0].saml.idp_metadata: required field is missing',
      'a.yaml:7:22: routes[0].saml.nameid_format: must be one of "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", "urn:oasis:names:tc:SAML:2.0:nameid-format:transient", "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress", "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"',
    ],
  },
  {
    rule: 'oidc issuer is a URL; client_id and client_secret required',
    files: { 'a.yaml': route('    oidc:\n      issuer: login.example.com\n') },
    expected: [
      'a.yaml:7:7: routes[0].oidc.client_id: required field is missing',
      'a.yaml:7:7: routes[0].oidc.client_secret: required field is missing',
      'a.yaml:7:15: routes[0].oidc.issuer: must be a URL',
    ],
  },
  // ---- webhooks ------------------------------------------------------------------------------
  {
    rule: 'webhook provider known',
    files: { 'a.yaml': route('    webhook_verification: { provider: strpe, secret: x }\n') },
    expected: [
      'a.yaml:6:39: routes[0].webhook_verification.provider: unknown webhook provider "strpe"; did you mean "stripe"?',
    ],
  },
  {
    rule: 'webhook provider needs a secret',
    files: { 'a.yaml': route('    webhook_verification:\n      provider: GitHub\n') },
    expected: ['a.yaml:7:7: routes[0].webhook_verification: provider "github" requires a secret'],
  },
  {
    rule: 'sns takes no secret',
    files: { 'a.yaml': route('    webhook_verification: { provider: sns, secret: x }\n') },
    expected: [
      'a.yaml:6:52: routes[0].webhook_verification.secret: the sns provider takes no secret',
    ],
  },
  // ---- user agent filter ---------------------------------------------------------------------
  {
    rule: 'user agent patterns are valid regular expressions',
    files: { 'a.yaml': route('    user_agent_filter: { deny: ["(?i)ok", "(broken"] }\n') },
    expected: [
      'a.yaml:6:43: routes[0].user_agent_filter.deny[1]: not an RE2 regular expression: missing closing ): `(broken`',
    ],
  },
  {
    rule: 'user agent patterns are RE2: no lookaround, backreferences or possessive quantifiers',
    files: {
      'a.yaml': route(
        '    user_agent_filter: { allow: ["(?=a)b", "(a)\\\\1", "a++", "^Mozilla/5\\\\.0"] }\n',
      ),
    },
    expected: [
      'a.yaml:6:34: routes[0].user_agent_filter.allow[0]: not an RE2 regular expression: invalid or unsupported Perl syntax: `(?=`',
      'a.yaml:6:44: routes[0].user_agent_filter.allow[1]: not an RE2 regular expression: invalid escape sequence: `\\1`',
      'a.yaml:6:54: routes[0].user_agent_filter.allow[2]: not an RE2 regular expression: invalid nested repetition operator: `++`',
    ],
  },
  // ---- circuit breaker -----------------------------------------------------------------------
  {
    rule: 'num_buckets at most 128',
    files: { 'a.yaml': route('    circuit_breaker: { num_buckets: 129 }\n') },
    expected: ['a.yaml:6:37: routes[0].circuit_breaker.num_buckets: must be at most 128'],
  },
  {
    rule: 'error_threshold_percentage in [0, 1]',
    files: { 'a.yaml': route('    circuit_breaker: { error_threshold_percentage: 50 }\n') },
    expected: [
      'a.yaml:6:52: routes[0].circuit_breaker.error_threshold_percentage: must be between 0 and 1 (a fraction, not a percentage)',
    ],
  },
  {
    rule: 'durations are positive whole numbers',
    files: {
      'a.yaml': route('    circuit_breaker: { tripped_duration: 0, rolling_window: 1.5 }\n'),
    },
    expected: [
      'a.yaml:6:42: routes[0].circuit_breaker.tripped_duration: must be greater than 0',
      'a.yaml:6:61: routes[0].circuit_breaker.rolling_window: must be a whole number',
    ],
  },
  // ---- headers -------------------------------------------------------------------------------
  {
    rule: 'header names (case-insensitive duplicates)',
    files: {
      'a.yaml': route(
        '    request_headers:\n      add: { X-A: "1", x-a: "2" }\n      remove: [X-B, x-b]\n',
      ),
    },
    expected: ['a.yaml:8:21: routes[0].request_headers.remove[1]: duplicate entry "x-b"'],
  },
  {
    rule: 'header names must be tokens',
    files: { 'a.yaml': route('    response_headers:\n      add: { "Bad Header": x }\n') },
    expected: [
      'a.yaml:7:14: routes[0].response_headers.add["Bad Header"]: invalid key: must be an HTTP header name',
    ],
  },
  {
    rule: 'traffic_policy value is a string or a mapping',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\ntraffic_policy: { value: [1] }\n' },
    expected: ['a.yaml:3:26: traffic_policy.value: must be a string or a mapping'],
  },
  // ---- references ----------------------------------------------------------------------------
  {
    rule: 'missing environment variable',
    files: {
      'a.yaml': route(
        '    oidc:\n      issuer: https://id.example\n      client_id: web\n      client_secret: { env: OIDC_SECRET }\n',
      ),
    },
    expected: [
      'a.yaml:9:29: routes[0].oidc.client_secret: environment variable OIDC_SECRET is not set',
    ],
  },
  {
    rule: 'missing file',
    files: { 'dir/a.yaml': 'kind: TLSEdge\nname: x\ndescription: { file: desc.txt }\n' },
    expected: ['dir/a.yaml:3:22: description: file desc.txt not found'],
  },
  {
    rule: 'a reference takes exactly one key',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\ndescription: { env: A, file: b }\n' },
    expected: ['a.yaml:3:14: description: a reference takes exactly one of "env" or "file"'],
  },
  {
    rule: 'a resolved value is validated too',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nbackend: { backend_id: { env: BACKEND } }\n' },
    options: { env: { BACKEND: 'bkd-wrong' } },
    expected: [
      'a.yaml:3:24: backend.backend_id: must be a backend ID (bkd..._...), e.g. bkdhr_2abc...',
    ],
  },
  {
    rule: 'references only stand for strings',
    files: { 'a.yaml': 'kind: TLSEdge\nname: x\nprotect: { env: PROTECT }\n' },
    options: { env: { PROTECT: 'true' } },
    expected: ['a.yaml:3:10: protect: expected true or false, got a mapping'],
  },
  // ---- YAML itself ---------------------------------------------------------------------------
  {
    rule: 'YAML syntax error',
    files: { 'a.yaml': 'kind: TLSEdge\nname: [x\n' },
    expected: [
      'a.yaml:3:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] (check the indentation of this line and the next)',
    ],
  },
  {
    rule: 'custom tags are refused',
    files: { 'a.yaml': 'kind: TLSEdge\nname: !secret x\n' },
    expected: ['a.yaml:2:7: Unresolved tag: !secret: custom tags are not supported'],
  },
];

describe('validation rules', () => {
  it.each(cases)('$rule', ({ files, expected, options }) => {
    const result = buildFrom(files, options);
    expect(result.ok).toBe(false);
    expect(errorLines(result)).toEqual(expected);
  });

  it('reports every error of every file at once, sorted by file, line and column', () => {
    const result = buildFrom({
      'b.yaml': 'kind: TLSEdge\nname: B\n',
      'a.yaml': 'kind: TLSEdge\nname: x\nhostports: [nope]\n---\nkind: Nope\n',
    });
    expect(errorLines(result)).toEqual([
      'a.yaml:3:13: hostports[0]: "nope" is not of the form hostname:portnumber',
      `a.yaml:5:7: kind: unknown kind "Nope"; expected one of ${KIND_NAMES}`,
      'b.yaml:2:7: name: names are 1-63 characters of a-z, 0-9, ".", "_" and "-", starting and ending with a letter or digit',
    ]);
  });
});
