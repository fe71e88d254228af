/**
 * Values read from `{ env }` / `{ file }` are sensitive: a diagnostic about such a field (or a
 * rule quoting it from another document) shows `(sensitive)`, never the value, in any case.
 */
import { describe, expect, it } from 'vitest';
import { buildFrom, errorLines } from './helpers.js';

const SECRET = 'Secret-Value-3f9a1c';

const route = (extra: string) => `kind: HTTPSEdge
name: shop
hostports: [shop.example.com:443]
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: bkdhr_x }
${extra}`;

describe('diagnostics never quote values read from env or file', () => {
  it.each([
    {
      name: 'a webhook provider (lower-cased before the rule quotes it)',
      files: {
        'a.yaml': route(
          '    webhook_verification: { provider: { env: P }, secret: s3cret-s3cret }\n',
        ),
      },
      expected: /unknown webhook provider "\(sensitive\)"/,
    },
    {
      name: 'a hostport quoted by a rule about another document',
      files: {
        'a.yaml': `kind: TLSEdge\nname: db\nhostports: [{ file: hp.txt }]\nbackend: { backend_id: bkdtg_x }\n`,
        'b.yaml': `kind: TLSEdge\nname: db2\nhostports: ["${SECRET.toLowerCase()}.example.com:443"]\nbackend: { backend_id: bkdtg_y }\n`,
      },
      expected: /\(sensitive\)/,
    },
  ])('$name', ({ files, expected }) => {
    const result = buildFrom(files, {
      env: { P: SECRET },
      refFiles: { 'hp.txt': `${SECRET.toLowerCase()}.example.com:443\n` },
    });
    expect(result.ok).toBe(false);
    const text = errorLines(result).join('\n');
    expect(text).toMatch(expected);
    expect(text.toLowerCase()).not.toContain(SECRET.toLowerCase());
  });
});
