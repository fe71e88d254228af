/**
 * Single-fault mutations of a valid cloud endpoint (./cloud-endpoint.ts), each naming the rule
 * of the specification it breaks, the code the service answers and, for a policy fault, the
 * path the answer names inside the document. A mutation changes the drawn case, so the faulty
 * endpoint renders both as a manifest and as an API body.
 */
import fc from 'fast-check';
import { CLOUD_SPEC, entryPhase } from '../cloud-spec.js';
import {
  type CloudEndpointCase,
  type CloudEndpointOptions,
  cloudEndpoint,
} from './cloud-endpoint.js';
import type { Policy } from './policy.js';

export interface Fault {
  readonly rule: string;
  readonly code: string;
  /** Where the answer points: a path inside the policy, or the body field. */
  readonly path: string;
}

interface Mutation {
  readonly rule: string;
  readonly code: string;
  readonly applies: (c: CloudEndpointCase) => boolean;
  /** The mutated case and the path the answer names (and its code, where it depends on it). */
  readonly apply: (
    c: CloudEndpointCase,
    pick: number,
  ) => { case: CloudEndpointCase; path: string; code?: string };
}

const isHttp = (c: CloudEndpointCase) => c.scheme === 'https' || c.scheme === 'http';
const copy = (p: Policy): Policy => structuredClone(p);

/** The policy with the entry phase's rules changed by `edit`; `edit` returns the path. */
function editEntry(
  c: CloudEndpointCase,
  edit: (rules: Record<string, unknown>[], phase: string) => string,
): { case: CloudEndpointCase; path: string } {
  const policy = copy(c.policy);
  const phase = entryPhase(c.scheme);
  const path = edit(policy[phase] as Record<string, unknown>[], phase);
  return { case: { ...c, policy }, path };
}

const actionsOf = (rule: Record<string, unknown> | undefined) =>
  (rule?.actions ?? []) as Record<string, unknown>[];

/** The table's bound violations for actions that run in a phase: [type, field, value, code]. */
function boundFaults(phase: string): [string, string, unknown, string][] {
  return (
    CLOUD_SPEC.actions
      // deny takes no config in on_tcp_connect: a bound there is no bound.
      .filter((a) => (a.phases as readonly string[]).includes(phase) && a.auth !== true)
      .filter((a) => !(a.type === 'deny' && phase === 'on_tcp_connect'))
      .flatMap((a) =>
        a.fields.flatMap((f) =>
          (
            [
              [f.min, f.codes?.min],
              [f.max, f.codes?.max],
            ] as const
          )
            .filter(([b]) => b !== undefined)
            .map(([b, code]): [string, string, unknown, string] => [
              a.type,
              f.name,
              b?.beyond,
              code ?? 'ERR_SVC_2215',
            ]),
        ),
      )
  );
}

const MUTATIONS: readonly Mutation[] = [
  {
    rule: 'an unknown action type',
    code: 'ERR_SVC_2201',
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        actionsOf(rules[0]).unshift({ type: 'rate-limiter' });
        return `${phase}[0].actions[0].type`;
      }),
  },
  {
    rule: 'an action in a phase it does not support',
    code: 'ERR_SVC_2202',
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        const alien = isHttp(c)
          ? { type: 'compress-response' }
          : { type: 'add-headers', config: { headers: { 'x-a': 'b' } } };
        actionsOf(rules[0]).unshift(alien);
        return `${phase}[0].actions[0].type`;
      }),
  },
  {
    rule: 'an http phase on a tls or tcp endpoint',
    code: 'ERR_SVC_2230',
    applies: (c) => !isHttp(c),
    apply: (c) => ({
      case: {
        ...c,
        policy: {
          ...copy(c.policy),
          on_http_response: [{ actions: [{ type: 'custom-response' }] }],
        },
      },
      path: 'on_http_response',
    }),
  },
  {
    rule: 'an action after a terminating one (unreachable)',
    code: 'ERR_SVC_2207',
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        const actions = actionsOf(rules[rules.length - 1]);
        actions.push({ type: 'set-vars', config: { vars: [] } });
        return `${phase}[${rules.length - 1}].actions[${actions.length - 1}]`;
      }),
  },
  {
    rule: "the entry phase's last rule has expressions",
    code: 'ERR_SVC_2235',
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        (rules[rules.length - 1] as Record<string, unknown>).expressions = [
          "conn.client_ip == '10.0.0.9'",
        ];
        return `${phase}[${rules.length - 1}]`;
      }),
  },
  {
    rule: "the entry phase's last action does not terminate",
    code: 'ERR_SVC_2235',
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        const actions = actionsOf(rules[rules.length - 1]);
        actions[actions.length - 1] = { type: 'set-vars', config: { vars: [] } };
        return `${phase}[${rules.length - 1}]`;
      }),
  },
  {
    rule: 'a second authentication action',
    code: 'ERR_SVC_2239',
    applies: isHttp,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        const before = rules.filter((r) =>
          actionsOf(r).some((a) => ['oauth', 'openid-connect', 'saml'].includes(String(a.type))),
        ).length;
        const at = rules.length - 1;
        rules.splice(
          at,
          0,
          {
            expressions: ["req.url.path == '/a'"],
            actions: [{ type: 'saml', config: { idp_metadata: '<E/>' } }],
          },
          {
            expressions: ["req.url.path == '/b'"],
            actions: [{ type: 'oauth', config: { provider: 'google' } }],
          },
        );
        return `${phase}[${before > 0 ? at : at + 1}].actions[0]`;
      }),
  },
  {
    rule: 'a config value one step beyond its bound',
    code: 'ERR_SVC_2215',
    applies: (c) => boundFaults(entryPhase(c.scheme)).length > 0,
    apply: (c, pick) => {
      const phase = entryPhase(c.scheme);
      const faults = boundFaults(phase);
      const [, , , code] = faults[pick % faults.length] as [string, string, unknown, string];
      const out = editEntry(c, (rules) => {
        const [type, field, value] = faults[pick % faults.length] as [
          string,
          string,
          unknown,
          string,
        ];
        const minimal = CLOUD_SPEC.actions
          .find((a) => a.type === type)
          ?.minimal(phase as never, c.scheme);
        actionsOf(rules[0]).unshift({ type, config: { ...minimal, [field]: value } });
        return `${phase}[0].actions[0].config.${field}`;
      });
      return { ...out, code };
    },
  },
  {
    rule: 'a rule expression that is not CEL',
    code: CLOUD_SPEC.policyCode,
    applies: () => true,
    apply: (c) =>
      editEntry(c, (rules, phase) => {
        rules.unshift({
          expressions: ["conn.client_ip == '10.0.0.1' &&"],
          actions: [{ type: 'deny' }],
        });
        return `${phase}[0].expressions[0]`;
      }),
  },
  {
    rule: 'a URL with a path',
    code: 'ERR_SVC_18001',
    applies: () => true,
    apply: (c) => ({ case: { ...c, url: `${c.url}/login` }, path: 'url:' }),
  },
  {
    rule: 'a scheme that is not https, http, tls or tcp',
    code: 'ERR_SVC_18022',
    applies: () => true,
    apply: (c) => ({ case: { ...c, url: c.url.replace(/^[a-z]+:/i, 'ftp:') }, path: 'url:' }),
  },
  {
    rule: 'a tcp URL without a port',
    code: 'ERR_SVC_18003',
    applies: (c) => c.scheme === 'tcp',
    apply: (c) => ({ case: { ...c, url: c.url.replace(/:\d+$/, '') }, path: 'url:' }),
  },
  {
    rule: 'a public endpoint on another port',
    code: 'ERR_SVC_18023',
    applies: (c) => c.binding === 'public' && c.scheme !== 'tcp',
    apply: (c) => ({
      case: { ...c, url: `${c.url.replace(/:\d+$/, '')}:8443` },
      path: 'bindings:',
    }),
  },
  {
    rule: 'an internal binding on a host outside .internal',
    code: 'ERR_SVC_18023',
    applies: (c) => c.binding !== 'internal',
    apply: (c) => ({
      case: { ...c, binding: 'internal', bindingWritten: true },
      path: 'bindings:',
    }),
  },
  {
    rule: 'a description over 255 bytes',
    code: 'ERR_SVC_18012',
    applies: () => true,
    apply: (c) => ({ case: { ...c, description: 'é'.repeat(128) }, path: 'description' }),
  },
];

/**
 * A valid endpoint (`original`) and the same with one fault (`case`), with what the service
 * answers. The rule is drawn first (each as often), then an endpoint it applies to.
 */
export function faultyCloudEndpoint(
  opts: CloudEndpointOptions = {},
): fc.Arbitrary<{ original: CloudEndpointCase; case: CloudEndpointCase; fault: Fault }> {
  return fc.constantFrom(...MUTATIONS).chain((m) =>
    fc.tuple(cloudEndpoint(opts).filter(m.applies), fc.nat()).map(([c, pick]) => {
      const out = m.apply(c, pick);
      return {
        original: c,
        case: out.case,
        fault: { rule: m.rule, code: out.code ?? m.code, path: out.path },
      };
    }),
  );
}

/** The rules the mutations break (for a coverage check). */
export const FAULT_RULES: readonly string[] = MUTATIONS.map((m) => m.rule);
