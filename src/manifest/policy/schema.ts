/**
 * The traffic policy document's shape as zod schemas, derived from the action table
 * (`./actions.ts`): phases (legacy names included) to lists of rules, a rule's `name`,
 * `expressions` (each parsed as CEL) and `actions`, and each action as a union discriminated by
 * its `type` whose `config` is the table's schema for that type. Rules that need the whole
 * document or the endpoint (phases per scheme, unreachable actions, one authentication action,
 * the terminating last rule) are `./rules.ts`.
 */
import { z } from 'zod';
import { suggest } from '../suggest.js';
import {
  ACTION_MISNAMES,
  ACTION_TYPES,
  ACTIONS,
  configSchema,
  PHASE_KEYS,
  phaseOf,
} from './actions.js';

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
