/**
 * The circuit breaker module of routes. The service needs the four sizes in every body: it
 * stores a left-out field as 0, and 0 is invalid for them (7016-7018, `checkCircuitBreaker`).
 */
import { z } from 'zod';
import { LIMITS } from '../edge-api.js';
import { positiveUint32, uint32 } from './blocks.js';
import { defineModule, enabledField, type Field, intProbes } from './field.js';

const uint32Write = () => z.number().int().min(0).max(LIMITS.uint32Max);
const uint32Read = () => z.number().int().min(0).nullish();

/** A size the service needs, greater than 0 (whatever the manifest schema's own bound). */
const size = (description: string, manifest: z.ZodNumber, max: number = LIMITS.uint32Max) =>
  ({
    presence: 'optional',
    description,
    manifest,
    write: max === LIMITS.uint32Max ? uint32Write() : uint32Write().max(max),
    read: uint32Read(),
    serviceRequired: true,
    probes: intProbes(1, max),
  }) as const satisfies Field;

export const circuitBreaker = defineModule({
  description: 'Circuit breaker module. error_threshold_percentage is a fraction in [0, 1].',
  fields: {
    enabled: enabledField(),
    tripped_duration: size(
      'Seconds the breaker stays open once tripped before it tries again.',
      positiveUint32(),
    ),
    rolling_window: size('Seconds of the window in which errors are counted.', positiveUint32()),
    num_buckets: size(
      'Buckets the rolling window is divided into.',
      positiveUint32().max(LIMITS.numBucketsMax, {
        error: `must be at most ${LIMITS.numBucketsMax}`,
      }),
      LIMITS.numBucketsMax,
    ),
    volume_threshold: size('Requests needed in the window before the breaker may trip.', uint32()),
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
