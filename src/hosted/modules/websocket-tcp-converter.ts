/** The websocket-to-TCP converter module of routes: on or off, nothing else. */
import { defineModule, enabledField } from './field.js';

export const websocketTcpConverter = defineModule({
  description: 'Websocket-to-TCP converter module.',
  fields: { enabled: enabledField() },
  example: {},
});
