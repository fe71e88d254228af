/**
 * The traffic policy document's shape as zod schemas, derived from the action table
 * (src/hosted/policy-actions.ts): phases (legacy names included) to lists of rules, a rule's `name`,
 * `expressions` (each parsed as CEL) and `actions`, and each action as a union discriminated by
 * its `type` whose `config` is the table's schema for that type. Rules that need the whole
 * document or the endpoint (phases per scheme, unreachable actions, one authentication action,
 * the terminating last rule) are `./rules.ts`.
 */
import { z } from 'zod';
import {
  ACTION_MISNAMES,
  ACTION_TYPES,
  ACTIONS,
  type ActionSpec,
  PHASE_KEYS,
  phaseOf,
} from '../../hosted/policy-actions.js';
import { REFABLE, refable } from '../modules.js';
import { suggest } from '../suggest.js';

/** The zod schema of one action's config, derived from its table entry. */
export function configSchema(spec: ActionSpec): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of Object.entries(spec.fields)) {
    const meta = {
      description: field.description,
      ...(field.default === undefined ? {} : { default: field.default }),
    };
    if (field.required) {
      // `meta` makes a new schema: it must stay a place a reference may stand in.
      const described = field.schema.meta(meta);
      shape[name] = REFABLE.has(field.schema) ? refable(described) : described;
    } else {
      shape[name] = field.schema.optional().meta(meta);
    }
  }
  const object = z.strictObject(shape);
  const check = spec.check;
  return check === undefined ? object : object.superRefine((c, ctx) => check(c, ctx));
}

/** Checked against the service's CEL with the rules across the document (./rules.ts). */
const celExpression = z.string();

const actionSchemas = Object.entries(ACTIONS).map(([type, spec]) =>
  z
    .strictObject({
      type: z.literal(type),
      config: configSchema(spec).nullable().optional(),
    })
    .meta({
      description: `${spec.description} Phases: ${spec.phases.join(', ')}.`,
    }),
);

export const PolicyActionSchema = z.discriminatedUnion(
  'type',
  actionSchemas as unknown as [(typeof actionSchemas)[number], ...(typeof actionSchemas)[number][]],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? `unknown action type ${describe(issue.input)}${meant(issue.input)}; known: ${ACTION_TYPES.join(', ')}`
        : undefined,
  },
);

/** "did you mean" for a type the documentation misnames, or one a typo away. */
function meant(action: unknown): string {
  const type =
    typeof action === 'object' && action !== null ? (action as { type?: unknown }).type : action;
  if (typeof type !== 'string') return '';
  const near = Object.hasOwn(ACTION_MISNAMES, type)
    ? ACTION_MISNAMES[type]
    : suggest(type, ACTION_TYPES);
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

/** The type as written (zod hands over the whole action). */
function describe(action: unknown): string {
  const type =
    typeof action === 'object' && action !== null ? (action as { type?: unknown }).type : action;
  if (typeof type === 'string') return JSON.stringify(type);
  return type === undefined ? '(none)' : `(a ${type === null ? 'null' : typeof type})`;
}

export const PolicyRuleSchema = z
  .strictObject({
    name: z.string().optional().meta({ description: 'A label for the rule.' }),
    expressions: z.array(celExpression).nullable().optional().meta({
      description: 'CEL expressions that must all hold for the rule to run (none: always).',
    }),
    actions: z
      .array(PolicyActionSchema)
      .min(1, { error: 'a rule needs at least one action' })
      .meta({ description: 'The actions, run in order.' }),
  })
  .meta({ id: 'PolicyRule', description: 'A rule of a traffic policy phase.' });

const phaseShape: Record<string, z.ZodType> = {};
for (const key of PHASE_KEYS) {
  const phase = phaseOf(key);
  phaseShape[key] = z
    .array(PolicyRuleSchema)
    .nullable()
    .optional()
    .meta({
      description:
        key === phase
          ? `The rules of the ${phase} phase, run in order.`
          : `Legacy name of ${phase}.`,
    });
}

/** A traffic policy as a mapping of phases to rules. */
export const PolicyDocumentSchema = z.strictObject(phaseShape).meta({
  description:
    'A traffic policy: phases (on_tcp_connect, on_http_request, on_http_response) to lists of rules.',
});
