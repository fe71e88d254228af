/**
 * The circuit breaker module of routes, and the service's rule on it. The service needs the four
 * sizes in every body: it stores a left-out field as 0, and 0 is invalid for them (7016-7018).
 * Each size states the code its absence is refused with; `checkCircuitBreaker` reads them.
 */
import { z } from 'zod';
import { ERROR_CODE, type ErrorCode, LIMITS, type RuleViolation } from '../edge-api.js';
import { positiveUint32, uint32 } from './blocks.js';
import { defineModule, enabledField, type Field, intProbes } from './field.js';

const uint32Write = () => z.number().int().min(0).max(LIMITS.uint32Max);
const uint32Read = () => z.number().int().min(0).nullish();

/** A size the service needs, greater than 0 (whatever the manifest schema's own bound). */
const size = (
  description: string,
  code: ErrorCode,
  manifest: z.ZodNumber,
  max: number = LIMITS.uint32Max,
) =>
  ({
    presence: 'optional',
    description,
    manifest,
    write: max === LIMITS.uint32Max ? uint32Write() : uint32Write().max(max),
    read: uint32Read(),
    serviceRequired: code,
    probes: intProbes(1, max),
  }) as const satisfies Field;

export const circuitBreaker = defineModule({
  description: 'Circuit breaker module. error_threshold_percentage is a fraction in [0, 1].',
  fields: {
    enabled: enabledField(),
    tripped_duration: size(
      'Seconds the breaker stays open once tripped before it tries again.',
      ERROR_CODE.circuitBreakerTrippedDuration,
      positiveUint32(),
    ),
    rolling_window: size(
      'Seconds of the window in which errors are counted.',
      ERROR_CODE.circuitBreakerRollingWindow,
      positiveUint32(),
    ),
    num_buckets: size(
      'Buckets the rolling window is divided into.',
      ERROR_CODE.circuitBreakerBuckets,
      positiveUint32().max(LIMITS.numBucketsMax, {
        error: `must be at most ${LIMITS.numBucketsMax}`,
      }),
      LIMITS.numBucketsMax,
    ),
    volume_threshold: size(
      'Requests needed in the window before the breaker may trip.',
      ERROR_CODE.circuitBreakerBuckets,
      uint32(),
    ),
    error_threshold_percentage: {
      presence: 'optional',
      description: 'Fraction of failed requests, in [0, 1], at which the breaker trips.',
      manifest: z
        .number({ error: 'must be a number' })
        .min(0, { error: 'must be between 0 and 1 (a fraction, not a percentage)' })
        .max(1, { error: 'must be between 0 and 1 (a fraction, not a percentage)' }),
      write: z.number().min(0).max(1),
      read: z.number().nullish(),
      default: 0,
      probes: { valid: [0, 0.5, 1], invalid: [-0.1, 1.5, 50, '0.5'] },
    },
  },
  example: { tripped_duration: 10, rolling_window: 60, num_buckets: 10, volume_threshold: 20 },
});

/**
 * The fields the service needs in every body, with the code it refuses each one's absence with
 * (`error_threshold_percentage` may be left out: stored as 0, a valid fraction). From the
 * definition above: a size added there is checked here.
 */
const CIRCUIT_BREAKER_REQUIRED: readonly (readonly [field: string, code: ErrorCode])[] =
  Object.entries(circuitBreaker.fields as Readonly<Record<string, Field>>).flatMap(([name, f]) =>
    f.serviceRequired === undefined ? [] : [[name, f.serviceRequired] as const],
  );

/**
 * The rule of the hosted service on a circuit breaker: a partial module is refused (7016-7018),
 * never completed with local defaults. The local server turns a violation into its 400, the
 * manifest validator into a located diagnostic.
 */
export function checkCircuitBreaker(
  module: Readonly<Record<string, unknown>>,
): (RuleViolation & { field: string })[] {
  const out: (RuleViolation & { field: string })[] = [];
  for (const [field, code] of CIRCUIT_BREAKER_REQUIRED) {
    const value = module[field];
    if (value === undefined || value === null || value === 0) {
      out.push({
        field,
        code,
        message: `${field} is required and must be greater than 0 (the service stores a missing field as 0, which is invalid)`,
      });
    }
  }
  return out;
}
