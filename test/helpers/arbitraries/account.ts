/**
 * fast-check generators for the account resources an endpoint reads at request time:
 * certificate authorities (the fixtures' PEMs), vaults and secrets (names of `a-z0-9._`, values
 * from the environment), and one cloud endpoint referring to them (`{ ref }` in `terminate-tls`'s
 * authorities, `${secrets.get('vault', 'name')}` in `verify-webhook`). With `faults`, some draws
 * break one rule (a certificate that is no CA, a name the service refuses, a reference to
 * nothing), for the properties that hold `validate` to the server.
 */
import fc from 'fast-check';
import { CA_PEM, LEAF_PEM, OTHER_CA_PEM, PUBLIC_KEY_PEM } from '../ca-pems.js';

interface SecretCase {
  readonly name: string;
  readonly vault: string;
  readonly value: string;
  readonly description: string | undefined;
}

export interface AccountCase {
  readonly docs: readonly Record<string, unknown>[];
  /** The environment the secrets' `{ env }` values and the digest key come from. */
  readonly env: Readonly<Record<string, string>>;
}

/** The controller's digest key in every generated environment. */
const DIGEST_KEY = 'property-digest-key-0b5e91';
const CA_NAMES = ['corp-ca', 'partner-ca'];
const VAULT_NAMES = ['webhooks', 'prod.keys', 'ci_1'];
const SECRET_NAMES = ['github_hook', 'stripe.key', 'token_2'];
const VALUES = ['whsec-one-1f', 'whsec-two-2e', 'a-longer-value-with spaces and = signs'];

/** Mostly `valid`, sometimes (with `faults`) one of `invalid`. */
function mix<T>(faults: boolean, valid: readonly T[], invalid: readonly T[]): fc.Arbitrary<T> {
  if (!faults) return fc.constantFrom(...valid);
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 12 },
    { arbitrary: fc.constantFrom(...invalid), weight: 1 },
  );
}

/**
 * CAs, vaults, secrets in them and an endpoint `hooks` on `host` reading some of them. Names
 * are unique per kind (a directory's rule, not the one under test).
 */
export function accountSet(
  options: { readonly faults?: boolean; readonly host?: string } = {},
): fc.Arbitrary<AccountCase> {
  const faults = options.faults === true;
  const host = options.host ?? 'hooks.example.com';
  const cas = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...CA_NAMES),
      pem: mix(faults, [CA_PEM, OTHER_CA_PEM], [LEAF_PEM, PUBLIC_KEY_PEM]),
      description: fc.option(fc.constantFrom('corporate root', 'partners'), { nil: undefined }),
    }),
    { maxLength: 2, selector: (c) => c.name },
  );
  const vaults = fc.uniqueArray(mix(faults, VAULT_NAMES, ['bad-vault']), { maxLength: 2 });
  return fc
    .record({ cas, vaults })
    .chain(({ cas, vaults }) =>
      fc.record({
        cas: fc.constant(cas),
        vaults: fc.constant(vaults),
        secrets:
          vaults.length === 0
            ? fc.constant<SecretCase[]>([])
            : fc.uniqueArray(
                fc.record<SecretCase>({
                  name: mix(faults, SECRET_NAMES, ['bad-secret']),
                  vault: mix(faults, vaults, ['nowhere']),
                  value: fc.constantFrom(...VALUES),
                  description: fc.option(fc.constantFrom('from CI'), { nil: undefined }),
                }),
                { maxLength: 3, selector: (s: SecretCase) => s.name },
              ),
        endpoint: fc.record({
          // Mostly there, mostly reading something: what the references need.
          present: fc.nat(3).map((n) => n > 0),
          ca: fc.option(
            mix(faults, cas.length === 0 ? ['none'] : cas.map((c) => c.name), ['no-such-ca']),
            { nil: undefined, freq: 4 },
          ),
          secret: fc.option(fc.nat(2), { nil: undefined, freq: 4 }),
          missingSecret: faults ? fc.boolean() : fc.constant(false),
        }),
      }),
    )
    .map(({ cas, vaults, secrets, endpoint }) => {
      const docs: Record<string, unknown>[] = [];
      const env: Record<string, string> = { EDGESYNC_SECRET_DIGEST_KEY: DIGEST_KEY };
      for (const c of cas) {
        docs.push({
          kind: 'CertificateAuthority',
          name: c.name,
          ca_pem: c.pem,
          ...(c.description === undefined ? {} : { description: c.description }),
        });
      }
      for (const v of vaults) docs.push({ kind: 'Vault', name: v });
      secrets.forEach((s, i) => {
        const variable = `PROPERTY_SECRET_${i}`;
        env[variable] = s.value;
        docs.push({
          kind: 'Secret',
          name: s.name,
          vault: s.vault,
          value: { env: variable },
          ...(s.description === undefined ? {} : { description: s.description }),
        });
      });
      if (endpoint.present) docs.push(hooksEndpoint(host, cas, secrets, endpoint));
      return { docs, env };
    });
}

/** The endpoint reading the account's resources: mutual TLS by a CA, a webhook by a secret. */
function hooksEndpoint(
  host: string,
  cas: readonly { readonly name: string }[],
  secrets: readonly { readonly name: string; readonly vault: string }[],
  pick: { ca?: string | undefined; secret?: number | undefined; missingSecret: boolean },
): Record<string, unknown> {
  const ca =
    pick.ca === 'none' || (cas.length === 0 && pick.ca !== 'no-such-ca') ? undefined : pick.ca;
  const read = pick.missingSecret
    ? { vault: secrets[0]?.vault ?? 'webhooks', name: 'missing_one' }
    : pick.secret === undefined
      ? undefined
      : secrets[pick.secret % Math.max(1, secrets.length)];
  const policy: Record<string, unknown> = {};
  if (ca !== undefined) {
    policy.on_tcp_connect = [
      {
        actions: [
          {
            type: 'terminate-tls',
            config: {
              mutual_tls_certificate_authorities: [{ ref: ca }],
              mutual_tls_verification_strategy: 'require-and-verify',
            },
          },
        ],
      },
    ];
  }
  policy.on_http_request = [
    {
      actions: [
        ...(read === undefined
          ? []
          : [
              {
                type: 'verify-webhook',
                config: {
                  provider: 'github',
                  secret: `\${secrets.get('${read.vault}', '${read.name}')}`,
                },
              },
            ]),
        { type: 'forward-internal', config: { url: 'https://hooks.internal' } },
      ],
    },
  ];
  return { kind: 'CloudEndpoint', name: 'hooks', url: `https://${host}`, traffic_policy: policy };
}
