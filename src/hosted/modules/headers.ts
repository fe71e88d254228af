/**
 * The headers module of routes, as `request_headers` and `response_headers`: headers to add and
 * header names to remove. Names are compared lower-cased (the service lower-cases response
 * header names).
 */
import { z } from 'zod';
import { checkHeaderValue, HEADER_NAME_PATTERN } from '../edge-api.js';
import { refable, ruled, uniqueList } from './blocks.js';
import { defineModule, enabledField } from './field.js';

const headerName = () =>
  refable(z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name' }));

export const headers = defineModule({
  description: 'Headers module: add (name to value) and remove (names).',
  fields: {
    enabled: enabledField(),
    add: {
      presence: 'optional',
      description: 'Headers to add, header name to value.',
      manifest: z.record(
        z.string().regex(HEADER_NAME_PATTERN, { error: 'must be an HTTP header name' }),
        refable(ruled(checkHeaderValue)),
      ),
      write: z.record(z.string(), z.string()),
      read: z.record(z.string(), z.string()).nullish(),
      caseInsensitive: true,
      probes: {
        valid: [{}, { 'x-a': 'b' }],
        invalid: [{ 'bad name': 'b' }, { 'x-a': 'b\nc' }, { 'X-A': 'b', 'x-a': 'c' }],
      },
    },
    remove: {
      presence: 'optional',
      description: 'Names of headers to remove.',
      manifest: uniqueList(headerName(), { ignoreCase: true }),
      write: z.array(z.string()),
      read: z.array(z.string()).nullish(),
      caseInsensitive: true,
      probes: { valid: [[], ['x-a', 'x-b']], invalid: [['bad name'], ['X-A', 'x-a'], 'x-a'] },
    },
  },
  example: {},
});
