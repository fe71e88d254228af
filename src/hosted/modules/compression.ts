/** The compression module of routes: on or off, nothing else. */
import { defineModule, enabledField } from './field.js';

export const compression = defineModule({
  description: 'Compression module.',
  fields: { enabled: enabledField() },
  example: {},
});
