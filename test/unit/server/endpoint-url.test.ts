/**
 * Endpoint URLs and bindings (cloud-endpoints.md, section 2) from the specification's rules:
 * normalisation, refusals with their codes, default bindings and what each binding allows.
 */
import { describe, expect, it } from 'vitest';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import {
  checkBinding,
  defaultBinding,
  parseEndpointUrl,
} from '../../../src/server/endpoints/url.js';
import { RequestError } from '../../../src/server/errors.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof RequestError) return err.errorCode;
    throw err;
  }
}

describe('normalisation', () => {
  it.each([
    ['https://App.Example.com:443', 'https://app.example.com', 443],
    ['HTTPS://app.example.com', 'https://app.example.com', 443],
    ['https://app.example.com/', 'https://app.example.com', 443],
    ['https://app.example.com:8443', 'https://app.example.com:8443', 8443],
    ['http://App.example.com:80', 'http://app.example.com', 80],
    ['http://app.example.com:443', 'http://app.example.com:443', 443],
    ['tls://App.Example.COM:443', 'tls://app.example.com:443', 443],
    ['tls://app.example.com', 'tls://app.example.com:443', 443],
    ['tcp://DB.internal:5432', 'tcp://db.internal:5432', 5432],
    ['https://*.example.com', 'https://*.example.com', 443],
  ])('%s is stored as %s', (text, url, port) => {
    const parsed = parseEndpointUrl(text);
    expect(parsed.url).toBe(url);
    expect(parsed.port).toBe(port);
    expect(parsed.host).toBe(parsed.host.toLowerCase());
  });
});

describe('refusals', () => {
  it.each([
    ['app.example.com', CODE.badScheme],
    ['app.example.com:443', CODE.badScheme],
    ['//app.example.com', CODE.badScheme],
    ['ftp://app.example.com', CODE.badScheme],
    ['wss://app.example.com', CODE.badScheme],
    ['https://app.example.com/path', CODE.badUrl],
    ['https://app.example.com?x=1', CODE.badUrl],
    ['https://app.example.com?', CODE.badUrl],
    ['https://app.example.com#frag', CODE.badUrl],
    ['https://user:pw@app.example.com', CODE.badUrl],
    ['https://user@app.example.com', CODE.badUrl],
    ['tcp://db.internal', CODE.portRequired],
    ['tcp://db.internal:0', CODE.badUrl],
    ['tcp://db.internal:70000', CODE.badUrl],
    ['https://bad_host.example.com', CODE.badUrl],
    ['https://[::1]', CODE.badUrl],
  ])('%s is refused with %s', (text, code) => {
    expect(codeOf(() => parseEndpointUrl(text))).toBe(code);
  });
});

describe('bindings', () => {
  it.each([
    ['https://app.example.com', 'public'],
    ['https://web.internal', 'internal'],
    ['tcp://db.svc.internal:5432', 'internal'],
    ['tls://app.example.com:443', 'public'],
  ])('%s defaults to %s', (text, binding) => {
    expect(defaultBinding(parseEndpointUrl(text))).toBe(binding);
  });

  it.each([
    ['https://app.example.com', 'public', undefined],
    ['https://app.example.com:8443', 'public', CODE.bindingMismatch],
    ['http://app.example.com', 'public', undefined],
    ['http://app.example.com:8080', 'public', CODE.bindingMismatch],
    ['tls://app.example.com:443', 'public', undefined],
    ['tls://app.example.com:8443', 'public', CODE.bindingMismatch],
    ['tcp://app.example.com:12345', 'public', undefined],
    ['https://web.internal', 'public', CODE.bindingMismatch],
    ['https://web.internal:8443', 'internal', undefined],
    ['tls://web.internal:9000', 'internal', undefined],
    ['https://app.example.com', 'internal', CODE.bindingMismatch],
    ['http://svc.ns', 'kubernetes', undefined],
    ['http://svc.ns:8080', 'kubernetes', undefined],
    ['tcp://svc.ns:5432', 'kubernetes', undefined],
    ['https://svc.ns', 'kubernetes', CODE.kubernetesScheme],
    ['tls://svc.ns:443', 'kubernetes', CODE.kubernetesScheme],
    ['http://a.svc.ns', 'kubernetes', CODE.bindingMismatch],
    ['http://svc.internal', 'kubernetes', CODE.bindingMismatch],
  ] as const)('%s with binding %s: %s', (text, binding, code) => {
    expect(codeOf(() => checkBinding(parseEndpointUrl(text), binding))).toBe(code);
  });
});
