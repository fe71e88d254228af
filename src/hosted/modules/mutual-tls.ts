/** The mutual TLS module: client certificates signed by these authorities. Edges of both kinds. */
import { z } from 'zod';
import { ID_PREFIX } from '../edge-api.js';
import { idPattern, refable, uniqueList } from './blocks.js';
import { defineModule, enabledField } from './field.js';
import { refSchema } from './refs.js';

export const mutualTls = defineModule({
  description:
    'Mutual TLS module: client certificates must be signed by one of these certificate authorities.',
  fields: {
    enabled: enabledField(),
    certificate_authority_ids: {
      presence: 'required',
      description: 'The certificate authorities a client certificate must be signed by.',
      manifest: uniqueList(
        refable(
          z.string().regex(idPattern(ID_PREFIX.certificateAuthority), {
            error: `must be a certificate authority ID (${ID_PREFIX.certificateAuthority}...)`,
          }),
        ),
      ),
      write: z.array(z.string()),
      read: z.array(refSchema),
      live: { key: 'certificate_authorities', refs: 'many' },
      probes: { valid: [[], ['ca_a'], ['ca_a', 'ca_b']], invalid: [['ipp_a'], ['ca_a', 'ca_a']] },
    },
  },
  example: { certificate_authority_ids: ['ca_example1'] },
});
