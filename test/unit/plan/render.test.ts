/** Inline snapshots of the three renderers, on one small plan with every kind of entry. */
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { maskPlan } from '../../../src/plan/mask.js';
import { buildPlan } from '../../../src/plan/plan.js';
import { renderJson } from '../../../src/plan/render/json.js';
import { escapeInline, renderMarkdown } from '../../../src/plan/render/markdown.js';
import { renderText } from '../../../src/plan/render/text.js';
import {
  desiredSet,
  httpsManifest,
  liveHttps,
  liveState,
  liveTls,
  routeManifest,
  tlsManifest,
} from './builders.js';

function samplePlan() {
  const live = liveState({
    tls: [
      liveTls({ id: 'edgtls_old', name: 'old', hostports: ['old.example.com:443'] }),
      liveTls({ id: 'edgtls_leg', metadata: 'legacy', hostports: ['leg.example.com:443'] }),
      liveTls({
        id: 'edgtls_for',
        name: 'x',
        owner: 'team-b',
        hostports: ['taken.example.com:443'],
      }),
    ],
    https: [
      liveHttps({
        id: 'edghts_shop',
        name: 'shop',
        hostports: ['shop.example.com:443'],
        routes: [
          {
            id: 'edghtsrt_1',
            match: '/',
            oauth: { provider: { google: { client_id: 'id', client_secret: 'old-secret' } } },
          },
        ],
      }),
    ],
  });
  const desired = desiredSet({
    tls: [
      tlsManifest({
        name: 'api',
        hostports: ['api.example.com:443'],
        backend: { backend_id: 'bkdhr_1' },
      }),
      tlsManifest({ name: 'legacy', id: 'edgtls_leg', hostports: ['leg.example.com:443'] }),
      tlsManifest({ name: 'blocked', hostports: ['taken.example.com:443'] }),
    ],
    https: [
      httpsManifest({
        name: 'shop',
        hostports: ['shop.example.com:443', 'www.example.com:443'],
        routes: [
          routeManifest(
            {
              match: '/',
              oauth: { provider: { google: { client_id: 'id', client_secret: 'new-secret' } } },
            },
            [['oauth', 'provider', 'google', 'client_secret']],
          ),
        ],
      }),
    ],
  });
  return buildPlan(desired, live);
}

describe('text', () => {
  it('renders like terraform plan, secrets masked', () => {
    expect(renderText(maskPlan(samplePlan(), []))).toMatchInlineSnapshot(`
      "edgesync will perform the following actions (owner "default"):

        ~ https_edge.shop (edghts_shop) will be updated in place: changed hostports
            ~ hostports = ["shop.example.com:443"] -> ["shop.example.com:443","www.example.com:443"]

        ~ https_edge.shop.route["/"] (edghtsrt_1) will be updated in place: set oauth
            ~ oauth.provider.google.client_secret = (sensitive) -> (sensitive)

        + tls_edge.api will be created: not found live
            + backend.backend_id = "bkdhr_1"
            + backend.enabled = true
            + hostports = ["api.example.com:443"]
            + metadata = "{\\"edgesync/name\\":\\"api\\",\\"edgesync/owner\\":\\"default\\"}"

        ~ tls_edge.legacy (edgtls_leg) will be adopted: adopt edgtls_leg named by id: (its metadata is not edgesync's); changed metadata
            ~ metadata = "legacy" -> "{\\"edgesync/name\\":\\"legacy\\",\\"edgesync/owner\\":\\"default\\"}"

        - tls_edge.old (edgtls_old) will be deleted: manifest removed
            - hostports = ["old.example.com:443"]

      Blocked (not attempted):

        ! tls_edge.blocked: conflict: hostport taken.example.com:443 is held by TLS edge edgtls_for which belongs to owner "team-b"; not attempted

      Warning: a new edge (tls_edge.api): the hosted service no longer accepts new edges; write a CloudEndpoint manifest instead (edgesync migrate translates edge manifests; see docs/migrate.md)

      Plan: 1 to create, 2 to update, 1 to delete, 1 to adopt, 1 blocked.
      "
    `);
  });

  it('says so when there is nothing to do', () => {
    expect(renderText(maskPlan(buildPlan(desiredSet(), liveState()), []))).toBe(
      'edgesync plan for owner "default":\n\nNo changes. Live state matches the manifests.\n',
    );
  });

  it('colours symbols only when asked', () => {
    const coloured = renderText(maskPlan(samplePlan(), []), { color: true });
    expect(coloured).toContain('\x1b[32m+\x1b[0m');
    expect(coloured).toContain('\x1b[31m-\x1b[0m');
    expect(coloured).toContain('\x1b[33m~\x1b[0m');
    expect(renderText(maskPlan(samplePlan(), []))).not.toContain('\x1b[');
  });
});

describe('json', () => {
  it('is the masked, versioned plan', () => {
    const text = renderJson(maskPlan(samplePlan(), []));
    expect(text).not.toContain('old-secret');
    expect(text).not.toContain('new-secret');
    const parsed = JSON.parse(text);
    expect(parsed.format_version).toBe(2);
    expect(
      parsed.changes.find((c: { address: string }) => c.address === 'https_edge.shop.route["/"]'),
    ).toMatchInlineSnapshot(`
      {
        "action": "update",
        "address": "https_edge.shop.route["/"]",
        "fields": [
          {
            "after": "(sensitive)",
            "before": "(sensitive)",
            "path": "oauth.provider.google.client_secret",
            "sensitive": true,
          },
        ],
        "id": "edghtsrt_1",
        "kind": "route",
        "modules": [
          {
            "module": "oauth",
            "status": "set",
          },
        ],
        "name": "/",
        "operations": [
          {
            "body": {
              "oauth": {
                "enabled": true,
                "provider": {
                  "google": {
                    "client_id": "id",
                    "client_secret": "(sensitive)",
                  },
                },
              },
            },
            "description": "update route /",
            "method": "PATCH",
            "path": "/edges/https/edghts_shop/routes/edghtsrt_1",
            "phase": "main",
            "sensitive_paths": [
              "oauth.provider.google.client_secret",
            ],
            "target": {
              "edge_id": "edghts_shop",
              "id": "edghtsrt_1",
              "kind": "route",
            },
          },
        ],
        "reason": "set oauth",
        "root": "https_edge.shop",
        "source": {
          "column": 1,
          "file": "edges.yaml",
          "line": 1,
        },
      }
    `);
  });
});

describe('markdown', () => {
  it('renders a summary table and one collapsible block per resource', () => {
    expect(renderMarkdown(maskPlan(samplePlan(), []))).toMatchInlineSnapshot(`
      "#### edgesync plan (owner \`default\`)

      > **Warning:** a new edge (tls_edge.api): the hosted service no longer accepts new edges; write a CloudEndpoint manifest instead (edgesync migrate translates edge manifests; see docs/migrate.md)

      **Plan: 1 to create, 2 to update, 1 to delete, 1 to adopt, 1 blocked.**

      | | Resource | Action | Reason |
      |---|---|---|---|
      | \`~\` | \`https_edge.shop\` | update | changed hostports |
      | \`~\` | \`https_edge.shop.route["/"]\` | update | set oauth |
      | \`+\` | \`tls_edge.api\` | create | not found live |
      | \`~\` | \`tls_edge.legacy\` | adopt | adopt edgtls_leg named by id: (its metadata is not edgesync's); changed metadata |
      | \`-\` | \`tls_edge.old\` | delete | manifest removed |

      <details><summary>~ <code>https_edge.shop</code> (<code>edghts_shop</code>) will be updated in place</summary>

      \`\`\`diff
      # changed hostports
      - hostports = ["shop.example.com:443"]
      + hostports = ["shop.example.com:443","www.example.com:443"]
      \`\`\`

      </details>

      <details><summary>~ <code>https_edge.shop.route["/"]</code> (<code>edghtsrt_1</code>) will be updated in place</summary>

      \`\`\`diff
      # set oauth
      - oauth.provider.google.client_secret = (sensitive)
      + oauth.provider.google.client_secret = (sensitive)
      \`\`\`

      </details>

      <details><summary>+ <code>tls_edge.api</code> will be created</summary>

      \`\`\`diff
      # not found live
      + backend.backend_id = "bkdhr_1"
      + backend.enabled = true
      + hostports = ["api.example.com:443"]
      + metadata = "{\\"edgesync/name\\":\\"api\\",\\"edgesync/owner\\":\\"default\\"}"
      \`\`\`

      </details>

      <details><summary>~ <code>tls_edge.legacy</code> (<code>edgtls_leg</code>) will be adopted</summary>

      \`\`\`diff
      # adopt edgtls_leg named by id: (its metadata is not edgesync's); changed metadata
      - metadata = "legacy"
      + metadata = "{\\"edgesync/name\\":\\"legacy\\",\\"edgesync/owner\\":\\"default\\"}"
      \`\`\`

      </details>

      <details><summary>- <code>tls_edge.old</code> (<code>edgtls_old</code>) will be deleted</summary>

      \`\`\`diff
      # manifest removed
      - hostports = ["old.example.com:443"]
      \`\`\`

      </details>

      **Blocked (not attempted)**

      | Resource | Kind | Reason |
      |---|---|---|
      | \`tls_edge.blocked\` | conflict | hostport taken.example.com:443 is held by TLS edge edgtls_for which belongs to owner "team-b"; not attempted |
      "
    `);
  });

  it('escapes only what Markdown would read, so the raw text stays readable', () => {
    expect(escapeInline('a|b <x> `c` *d* _e_ [f](g)\nh')).toBe(
      'a\\|b \\<x\\> \\`c\\` \\*d\\* \\_e\\_ \\[f\\](g) h',
    );
    // Inside words, underscores and quotes are left alone; `&` only before a reference.
    expect(escapeInline('set circuit_breaker on route["/api"] & more &amp;')).toBe(
      'set circuit_breaker on route\\["/api"\\] & more &amp;amp;',
    );
  });

  it.each([
    'set circuit_breaker; removed user_agent_filter',
    'a|b <x> `c` *d* _e_ [f](g) ~~s~~ \\ &amp; &#42; # h',
    '__init__ *_mixed_* <script>alert(1)</script>',
  ])('renders %j in a table cell as exactly that text', (text) => {
    const md = `| a | b |\n|---|---|\n| x | ${escapeInline(text)} |\n`;
    const html = new MarkdownIt({ html: true }).render(md);
    const cell = /<td>x<\/td>\s*<td>([\s\S]*?)<\/td>/.exec(html)?.[1] ?? '';
    const decoded = cell
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&quot;', '"')
      .replaceAll('&amp;', '&');
    expect(decoded).toBe(text);
  });

  it('escapes what could break the comment', () => {
    const plan = buildPlan(
      desiredSet({
        tls: [tlsManifest({ name: 'x', description: '```\n</details> | ```` <script>' })],
      }),
      liveState(),
    );
    const md = renderMarkdown(maskPlan(plan, []));
    // The description holds a 4-backtick run: the fence is longer, so the block cannot end early.
    expect(md).toContain('`````diff\n');
    const outsideCode = md.replace(/`````diff\n[\s\S]*?\n`````/g, '');
    expect(outsideCode.match(/<\/details>/g)).toHaveLength(1);
    expect(outsideCode).not.toContain('<script>');
    expect(outsideCode).not.toContain('```');
  });

  it('says so when there is nothing to do', () => {
    expect(
      renderMarkdown(maskPlan(buildPlan(desiredSet(), liveState()), [])),
    ).toMatchInlineSnapshot(`
      "#### edgesync plan (owner \`default\`)

      No changes. Live state matches the manifests.
      "
    `);
  });
});

describe('summary line', () => {
  it('a plan that is only blocked says how many are blocked', async () => {
    const { summaryLine } = await import('../../../src/plan/render/common.js');
    const plan = {
      summary: { create: 0, update: 0, delete: 0, adopt: 0, noop: 3 },
      blocked: [
        { address: 'tls_edge.a', kind: 'conflict', reason: 'x' },
        { address: 'tls_edge.b', kind: 'guard', reason: 'y' },
      ],
    } as never;
    expect(summaryLine(plan)).toBe(
      'Plan: 0 to create, 0 to update, 0 to delete, 0 to adopt, 2 blocked.',
    );
  });
});
