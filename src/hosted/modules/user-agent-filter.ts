/** The user agent filter module of routes: RE2 patterns, checked as the service checks them. */
import { z } from 'zod';
import { checkUserAgentPattern } from '../edge-api.js';
import { refable, ruled, uniqueList } from './blocks.js';
import { defineModule, enabledField, type Field } from './field.js';

/** RE2-style patterns (a leading `(?i)` allowed). */
const patterns = (description: string) =>
  ({
    presence: 'optional',
    description,
    manifest: uniqueList(refable(ruled(checkUserAgentPattern))),
    write: z.array(z.string()),
    read: z.array(z.string()).nullish(),
    probes: { valid: [[], ['(?i)curl/.*', 'bot']], invalid: [['(?=x)'], ['a', 'a'], 'bot'] },
  }) as const satisfies Field;

export const userAgentFilter = defineModule({
  description: 'User agent filter module: allow and deny regular expressions.',
  fields: {
    enabled: enabledField(),
    allow: patterns('User agents allowed: RE2 regular expressions.'),
    deny: patterns('User agents refused: RE2 regular expressions.'),
  },
  example: {},
});
