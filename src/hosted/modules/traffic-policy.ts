/** The traffic policy module of edges and routes: a policy document, sent as text. */
import { z } from 'zod';
import { jsonMapping, refable } from './blocks.js';
import { defineModule, enabledField } from './field.js';

export const trafficPolicy = defineModule({
  description: 'Traffic policy module: value is a string, or a mapping sent as JSON.',
  fields: {
    enabled: enabledField(),
    value: {
      presence: 'required',
      description: 'The policy document: YAML or JSON text, or a mapping (sent as JSON).',
      // The manifest may hold a mapping; the model always holds the string the API takes.
      manifest: refable(
        z
          .union([z.string(), jsonMapping()], { error: 'must be a string or a mapping' })
          .transform((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
      ),
      write: z.string(),
      read: z.string(),
      probes: { valid: ['{}', 'on_http_request: []'], invalid: [{}, 3] },
    },
  },
  example: { value: '{}' },
});
