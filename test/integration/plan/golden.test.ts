/**
 * The golden plan corpus: fixed manifest directories and fixed live states (API records as the
 * local server answered them), and the plans they give in every format, committed under
 * `test/golden/<scenario>/`. Any change to what a plan says (an address, an order, a value, a
 * masked secret) shows here as a diff to review; refactors must leave every file unchanged.
 * `npx vitest run test/integration/plan/golden.test.ts -u` rewrites them after an intended change.
 *
 * Scenarios: `create` (the shipped examples against an empty account), `noop` (the same,
 * applied), `change` (edited manifests against the applied examples plus another owner's edge,
 * an edge made by hand and a credential header set by hand on a live route).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { botUserSchema, httpsEdgeSchema, tlsEdgeSchema } from '../../../src/api/schemas.js';
import { loadDesiredSet } from '../../../src/manifest/loader.js';
import { secretValues } from '../../../src/manifest/secrets.js';
import { maskPlan } from '../../../src/plan/mask.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { renderMarkdown } from '../../../src/plan/render/markdown.js';
import { renderText } from '../../../src/plan/render/text.js';

const GOLDEN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../golden');

const liveSchema = z.object({
  tlsEdges: z.array(tlsEdgeSchema),
  httpsEdges: z.array(httpsEdgeSchema),
  botUsers: z.array(botUserSchema),
});

/** The values the manifests read from the environment (dummies, masked in every output). */
const ENV = { PARTNER_API_KEY: 'partner-key-5b1d0c7e2a' };

async function planOf(scenario: string) {
  const dir = path.join(GOLDEN, scenario);
  const { set } = await loadDesiredSet(path.join(dir, 'manifests'), { env: ENV });
  const records = liveSchema.parse(JSON.parse(await readFile(path.join(dir, 'live.json'), 'utf8')));
  const live = { ...records, calls: { tls: 1, https: 1, botUsers: 1 } };
  const plan = buildPlan(set, live, { owner: 'default' });
  return maskPlan(plan, secretValues(set, live));
}

describe('golden plan corpus', () => {
  for (const scenario of ['create', 'noop', 'change']) {
    it(`${scenario}: the plan in text, Markdown and JSON is unchanged`, async () => {
      const masked = await planOf(scenario);
      const dir = path.join(GOLDEN, scenario);
      await expect(renderText(masked, { color: false })).toMatchFileSnapshot(
        path.join(dir, 'plan.txt'),
      );
      await expect(renderMarkdown(masked)).toMatchFileSnapshot(path.join(dir, 'plan.md'));
      await expect(renderJson(masked)).toMatchFileSnapshot(path.join(dir, 'plan.json'));
    });
  }

  it('change: no secret reaches any format (env value, file values, a live credential header)', async () => {
    const masked = await planOf('change');
    const secrets = [
      ENV.PARTNER_API_KEY,
      'hand-set-live-token-9f8e7d',
      (
        await readFile(path.join(GOLDEN, 'change/manifests/secrets/google-client-secret'), 'utf8')
      ).trim(),
    ];
    for (const text of [
      renderText(masked, { color: false }),
      renderMarkdown(masked),
      renderJson(masked),
    ]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
  });
});
