/**
 * Valid traffic policies for an endpoint of a scheme, drawn from the specification's action
 * table (../cloud-spec.ts): phases valid for the scheme; in each, guarded rules (CEL from
 * ./cel.ts) of actions that run in that phase with configs built from the table's valid values
 * and bounds; at most one authentication action; a terminating action only last in its rule (no
 * unreachable action); the entry phase ending in an unguarded rule whose last action terminates.
 *
 * Secret-bearing values (`client_secret`, webhook `secret`, `server_private_key`) are
 * `SecretSlot`s: `./cloud-endpoint.ts` writes each literally or as `{ env }` in a manifest and
 * resolves it in an API body.
 */
import fc from 'fast-check';
import {
  type ActionRow,
  CLOUD_SPEC,
  entryPhase,
  type FieldRow,
  type Phase,
  type Scheme,
} from '../cloud-spec.js';
import { celExpression } from './cel.js';

/** A secret in a policy: its value, and the variable a manifest reads it from (if any). */
export interface SecretSlot {
  readonly $secret: string;
  readonly $env?: string;
}

export const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'client_secret',
  'secret',
  'server_private_key',
]);

export type Policy = Record<string, Record<string, unknown>[]>;

const secretValue = fc
  .string({
    unit: fc.constantFrom(...'abcdefghjkmnpqrstuvwxyz23456789'),
    minLength: 12,
    maxLength: 12,
  })
  .map((s) => `sec-${s}`);
const envName = fc.integer({ min: 0, max: 999 }).map((n) => `CE_SECRET_${n}`);
const secretSlot = (pem: boolean): fc.Arbitrary<SecretSlot> =>
  fc.record(
    {
      $secret: pem
        ? secretValue.map((s) => `-----BEGIN PRIVATE KEY-----\n${s}\n-----END PRIVATE KEY-----\n`)
        : secretValue,
      $env: envName,
    },
    { requiredKeys: ['$secret'] },
  );

/** The values the table gives a field: its valid ones and its bounds. */
function valuesOf(f: FieldRow): fc.Arbitrary<unknown> {
  const values = [...f.valid, ...(f.min ? [f.min.at] : []), ...(f.max ? [f.max.at] : [])];
  return fc.constantFrom(...values);
}

/** The fields a generated config may carry beside the minimal one (the url is the scheme's). */
const GENERATED_FIELD = (row: ActionRow, f: FieldRow) =>
  !(row.type === 'forward-internal' && f.name === 'url');

/** A valid config of `row` in `phase` (undefined: the action takes none there). */
function configOf(row: ActionRow, phase: Phase, scheme: Scheme): fc.Arbitrary<unknown> {
  if (row.fields.length === 0 || (row.type === 'deny' && phase === 'on_tcp_connect')) {
    return fc.constant(undefined);
  }
  const fields = row.fields.filter((f) => GENERATED_FIELD(row, f));
  const shape = Object.fromEntries(fields.map((f) => [f.name, valuesOf(f)]));
  return fc
    .tuple(fc.record(shape, { requiredKeys: [] }), secretSlot(false), secretSlot(true))
    .map(([picked, secret, pemSecret]) => {
      const config: Record<string, unknown> = { ...row.minimal(phase, scheme) };
      for (const [name, value] of Object.entries(picked)) {
        Object.assign(config, fields.find((f) => f.name === name)?.with, { [name]: value });
      }
      return withSecrets(fixCrossFields(row.type, config), secret, pemSecret);
    });
}

/** The rules of the table's notes that tie fields together. */
function fixCrossFields(type: string, c: Record<string, unknown>): Record<string, unknown> {
  if (type === 'terminate-tls' && Number(c.min_version ?? 1.2) > Number(c.max_version ?? 1.3)) {
    delete c.max_version;
  }
  if (type === 'oauth' && ['amazon', 'facebook'].includes(String(c.provider))) {
    c.client_id ??= 'id';
    c.client_secret ??= 'secret';
  }
  return c;
}

function withSecrets(
  c: Record<string, unknown>,
  secret: SecretSlot,
  pemSecret: SecretSlot,
): Record<string, unknown> {
  for (const name of SECRET_FIELDS) {
    if (c[name] !== undefined) c[name] = name === 'server_private_key' ? pemSecret : secret;
  }
  return c;
}

const kindOf = (phase: Phase) => (phase === 'on_tcp_connect' ? 'tcp' : 'http');

/** An action of the phase: non-terminating ones (forward-internal with on_error: continue). */
function passingAction(phase: Phase, scheme: Scheme): fc.Arbitrary<Record<string, unknown>> {
  const rows = CLOUD_SPEC.actions.filter(
    (a) => a.phases.includes(phase) && a.terminating !== true && a.auth !== true,
  );
  return fc.oneof(
    ...rows.map((row) =>
      configOf(row, phase, scheme).map((config) => {
        if (row.terminating === false) return action(row.type, config);
        return action(row.type, { ...(config as object), on_error: 'continue' });
      }),
    ),
  );
}

/** A terminating action of the phase (forward-internal with on_error absent or halt). */
function endingAction(phase: Phase, scheme: Scheme): fc.Arbitrary<Record<string, unknown>> {
  const rows = CLOUD_SPEC.actions.filter(
    (a) => a.phases.includes(phase) && a.terminating !== false,
  );
  return fc.oneof(
    ...rows.map((row) =>
      configOf(row, phase, scheme).map((config) => {
        if (row.terminating === true) return action(row.type, config);
        const { on_error: _ignored, ...rest } = config as Record<string, unknown>;
        return action(row.type, rest);
      }),
    ),
  );
}

const action = (type: string, config: unknown) =>
  config === undefined ? { type } : { type, config };

function rule(
  phase: Phase,
  scheme: Scheme,
  opts: { guarded: boolean; ends: boolean | undefined },
): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record({
      name: fc.option(fc.constantFrom('block admins', 'headers', 'gate'), { nil: undefined }),
      expressions: fc.array(celExpression(kindOf(phase)), { minLength: 1, maxLength: 2 }),
      passing: fc.array(passingAction(phase, scheme), {
        minLength: opts.ends === false ? 1 : 0,
        maxLength: 3,
      }),
      ending:
        opts.ends === undefined
          ? fc.option(endingAction(phase, scheme))
          : endingAction(phase, scheme),
    })
    .map((r) => {
      const actions = [...r.passing];
      if (opts.ends !== false && r.ending !== null) actions.push(r.ending);
      if (actions.length === 0) actions.push({ type: 'set-vars', config: { vars: [] } });
      const out: Record<string, unknown> = {};
      if (r.name !== undefined) out.name = r.name;
      if (opts.guarded) out.expressions = r.expressions;
      out.actions = actions;
      return out;
    });
}

/** 0..n guarded rules (each may end its phase when its guard holds). */
const guardedRules = (phase: Phase, scheme: Scheme, max: number) =>
  fc.array(rule(phase, scheme, { guarded: true, ends: undefined }), { maxLength: max });

/** At most one authentication action, as its own rule (guarded or not). */
function authRule(scheme: Scheme): fc.Arbitrary<Record<string, unknown> | null> {
  const auths = CLOUD_SPEC.actions.filter((a) => a.auth === true);
  return fc.option(
    fc
      .tuple(
        fc.oneof(
          ...auths.map((row) =>
            configOf(row, 'on_http_request', scheme).map((c) => action(row.type, c)),
          ),
        ),
        fc.option(celExpression('http'), { nil: undefined }),
      )
      .map(([auth, guard]) =>
        guard === undefined ? { actions: [auth] } : { expressions: [guard], actions: [auth] },
      ),
    { freq: 2 },
  );
}

/** A valid traffic policy for an endpoint of `scheme`. */
export function trafficPolicy(scheme: Scheme): fc.Arbitrary<Policy> {
  const entry = entryPhase(scheme);
  const others = CLOUD_SPEC.phases[scheme].filter((p) => p !== entry);
  return fc
    .record({
      auth: entry === 'on_http_request' ? authRule(scheme) : fc.constant(null),
      guarded: guardedRules(entry, scheme, 3),
      last: rule(entry, scheme, { guarded: false, ends: true }),
      others: fc.tuple(
        ...others.map((p) => fc.option(guardedRules(p, scheme, 2), { nil: undefined })),
      ),
      order: fc.boolean(),
    })
    .map((p) => {
      const entryRules = [...(p.auth === null ? [] : [p.auth]), ...p.guarded, p.last];
      const extra: Policy = {};
      others.forEach((phase, i) => {
        const rules = p.others[i];
        if (rules !== undefined) extra[phase] = rules;
      });
      // The order of phases in the document does not matter: both orders are drawn.
      return p.order ? { [entry]: entryRules, ...extra } : { ...extra, [entry]: entryRules };
    });
}

export function isSecretSlot(value: unknown): value is SecretSlot {
  return typeof value === 'object' && value !== null && '$secret' in value;
}
