/**
 * An `HttpExchange` over an undici `Dispatcher`, so the client's unit tests can script answers
 * and failures with undici's MockAgent. undici is a test and benchmark dependency only: the
 * product's exchange is Node's `http` (src/api/http.ts).
 */
import { type Dispatcher, request } from 'undici';
import type { HttpExchange } from '../../../src/api/http.js';

export function undiciExchange(dispatcher: Dispatcher): HttpExchange {
  return async ({ method, url, headers, body, signal }) => {
    const res = await request(url, { dispatcher, method, headers, body, signal });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };
}
