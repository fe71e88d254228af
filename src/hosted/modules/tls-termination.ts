/**
 * TLS termination, in two shapes: TLS edges say where TLS ends (`EndpointTLSTermination`); HTTPS
 * edges always terminate at the edge and take no `terminate_at` (`EndpointTLSTerminationAtEdge`).
 * `min_version` defaults to 1.2 wherever TLS terminates here, and is null under `upstream`.
 */
import { z } from 'zod';
import { DEFAULT_TLS_MIN_VERSION, TERMINATE_AT, TLS_VERSIONS } from '../edge-api.js';
import { refable } from './blocks.js';
import { defineModule, enabledField, enumProbes, type Field } from './field.js';

const minVersion = () =>
  ({
    presence: 'optional',
    description: 'The lowest TLS version accepted from clients.',
    manifest: refable(z.enum(TLS_VERSIONS)),
    write: z.enum(TLS_VERSIONS).nullable(),
    read: z.string().nullable(),
    default: DEFAULT_TLS_MIN_VERSION,
    defaultWhen: (module) => (module.terminate_at ?? 'edge') !== 'upstream',
    probes: enumProbes(TLS_VERSIONS),
  }) as const satisfies Field;

export const tlsTermination = defineModule({
  description:
    'TLS termination (TLS edges): where TLS ends; min_version must be absent when terminate_at is upstream.',
  fields: {
    enabled: enabledField(),
    terminate_at: {
      presence: 'optional',
      description: 'Where TLS ends: at the edge, at the agent, or upstream (passed through).',
      manifest: refable(z.enum(TERMINATE_AT)),
      write: z.enum(TERMINATE_AT),
      // HTTPS edges terminate at the edge by definition; the service may leave it out there.
      read: z.string().nullish(),
      default: 'edge',
      probes: enumProbes(TERMINATE_AT),
    },
    min_version: minVersion(),
  },
  example: {},
});

export const tlsTerminationAtEdge = {
  ...defineModule({
    description: 'TLS termination (HTTPS edges): always at the edge; terminate_at is not accepted.',
    fields: { enabled: enabledField(), min_version: minVersion() },
    example: {},
  }),
  // The service returns the TLS edges' shape, `terminate_at` (always edge) included.
  read: tlsTermination.read,
};
