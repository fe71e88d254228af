/** The one table of defaults, and the manifest reference's copy of it. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODULE_DEFAULTS, moduleDefault } from '../../../src/hosted/defaults.js';
import { canonicalModule } from '../../../src/plan/normalize.js';

describe('MODULE_DEFAULTS', () => {
  it('the manifest reference (docs/reference/manifests.md) lists exactly the table', () => {
    const readme = readFileSync(
      path.join(import.meta.dirname, '..', '..', '..', 'docs', 'reference', 'manifests.md'),
      'utf8',
    );
    const block =
      /<!-- defaults-table:start -->([\s\S]*?)<!-- defaults-table:end -->/.exec(readme)?.[1] ?? '';
    const rows = [...block.matchAll(/^\| `([a-z_]+)` \| `([a-z_]+)` \| `([^`]*)` \|$/gm)].map(
      ([, m, f, v]) => [m, f, v],
    );
    const expected = Object.entries(MODULE_DEFAULTS).flatMap(([m, fields]) =>
      Object.entries(fields).map(([f, v]) => [m, f, v === '' ? '""' : String(v)]),
    );
    expect(rows).toEqual(expected);
  });

  it('min_version has no default under upstream termination', () => {
    expect(moduleDefault('tls_termination', 'min_version', {})).toBe('1.2');
    expect(
      moduleDefault('tls_termination', 'min_version', { terminate_at: 'upstream' }),
    ).toBeUndefined();
    expect(canonicalModule('tls_termination', { terminate_at: 'upstream' }, true)).toEqual({
      terminate_at: 'upstream',
    });
    expect(
      canonicalModule('saml', { idp_metadata: '<x/>', cookie_prefix: 'a.' }, true),
    ).toMatchObject({
      cookie_prefix: 'a.',
      allow_idp_initiated: true,
    });
  });
});
