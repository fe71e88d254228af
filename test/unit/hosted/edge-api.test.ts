import { describe, expect, it } from 'vitest';
import {
  isValidHostport,
  isValidUserAgentPattern,
  utf8Bytes,
} from '../../../src/hosted/edge-api.js';

describe('isValidUserAgentPattern', () => {
  it.each([
    ['(?i)^.*(sqlmap|nikto).*$', true],
    ['(?is)curl/.*', true],
    ['^Mozilla/5\\.0', true],
    ['(?U)a+', true],
    ['', false],
    ['(unclosed', false],
    ['(?i)(unclosed', false],
    ['(?x)only-re2-flags-we-do-not-know', false],
  ])('%s -> %s', (pattern, valid) => {
    expect(isValidUserAgentPattern(pattern)).toBe(valid);
  });
});

describe('isValidHostport', () => {
  it.each([
    ['shop.example.com:443', true],
    ['*.example.com:443', true],
    ['*.example.com:8443', false],
    ['db.example.com:5432', false],
    ['10.0.0.1:5432', true],
    ['203.0.113.7:1', true],
    ['example.com:0', false],
    ['example.com:65536', false],
    ['example.com', false],
    ['exa mple.com:443', false],
  ])('%s -> %s', (hostport, valid) => {
    expect(isValidHostport(hostport)).toBe(valid);
  });
});

describe('utf8Bytes', () => {
  it.each([
    ['abc', 3],
    ['é', 2],
    ['日本', 6],
  ])('%s is %i bytes', (text, bytes) => {
    expect(utf8Bytes(text)).toBe(bytes);
  });
});
