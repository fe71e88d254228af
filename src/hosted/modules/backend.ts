/** The backend module (`EndpointBackendMutate`): where traffic goes. TLS edges and routes. */
import { z } from 'zod';
import { BACKEND_ID_PATTERN } from '../edge-api.js';
import { refable } from './blocks.js';
import { defineModule, enabledField } from './field.js';
import { refSchema } from './refs.js';

export const backend = defineModule({
  description: 'Backend module: where traffic goes (EndpointBackendMutate).',
  fields: {
    enabled: enabledField(),
    backend_id: {
      presence: 'required',
      description: 'The backend that serves the traffic (bkd..._...).',
      manifest: refable(
        z.string().regex(BACKEND_ID_PATTERN, {
          error: 'must be a backend ID (bkd..._...), e.g. bkdhr_2abc...',
        }),
      ),
      write: z.string(),
      read: refSchema,
      live: { key: 'backend', refs: 'one' },
      probes: { valid: ['bkdhr_2abc', 'bkdtg_Z9'], invalid: ['hr_2abc', 'bkdhr_', 7] },
    },
  },
  example: { backend_id: 'bkdhr_example1' },
});
