/** The IP restriction module: only sources the IP policies allow. TLS edges and routes. */
import { z } from 'zod';
import { ID_PREFIX } from '../edge-api.js';
import { idPattern, refable, uniqueList } from './blocks.js';
import { defineModule, enabledField } from './field.js';
import { refSchema } from './refs.js';

export const ipRestriction = defineModule({
  description: 'IP restriction module: only sources allowed by these IP policies (at least one).',
  fields: {
    enabled: enabledField(),
    ip_policy_ids: {
      presence: 'required',
      description: 'The IP policies whose rules decide which sources may connect.',
      manifest: uniqueList(
        refable(
          z.string().regex(idPattern(ID_PREFIX.ipPolicy), {
            error: `must be an IP policy ID (${ID_PREFIX.ipPolicy}...)`,
          }),
        ),
      ).min(1, { error: 'at least one IP policy ID is required' }),
      write: z.array(z.string()),
      read: z.array(refSchema),
      live: { key: 'ip_policies', refs: 'many' },
      probes: {
        valid: [['ipp_a'], ['ipp_a', 'ipp_b']],
        invalid: [[], ['ca_a'], ['ipp_a', 'ipp_a'], 'ipp_a'],
      },
    },
  },
  example: { ip_policy_ids: ['ipp_example1'] },
});
