/**
 * A kind that exists only in this test, handed to every consumer that takes `kinds`: import,
 * the report's readiness and `/status`, the JSON Schema, release and validate's counts read it
 * from its definition alone, with no line of code about it. Nothing is registered globally.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import type { LiveSnapshot } from '../../../src/api/index.js';
import { importLive } from '../../../src/apply/import.js';
import { parseReleaseTarget, planRelease } from '../../../src/apply/release.js';
import { otherKindCounts } from '../../../src/cli/commands/validate.js';
import { createDaemonMetrics } from '../../../src/daemon/metrics.js';
import { INITIAL_STATUS, reduceStatus } from '../../../src/daemon/status.js';
import { EMPTY_SUMMARY } from '../../../src/daemon/types.js';
import { readableOf, resourcesOf } from '../../../src/engine/report.js';
import { refable } from '../../../src/hosted/modules/blocks.js';
import { KINDS, type KindDefinition, type LiveRecord } from '../../../src/kinds/index.js';
import type { ResourceCounts } from '../../../src/manifest/build.js';
import { manifestJsonSchema } from '../../../src/manifest/jsonschema.js';
import { NAME_PATTERN } from '../../../src/manifest/schema.js';
import type { Plan } from '../../../src/plan/index.js';

const name = z.string().regex(NAME_PATTERN);

/** Owned by its mark; one sensitive field read back, one write-only; readiness read live. */
const WIDGET: KindDefinition = {
  kind: 'widget',
  plural: 'widgets',
  manifestKinds: ['Widget'],
  description: 'A widget of the test account.',
  schema: z.strictObject({
    kind: z.literal('Widget'),
    name,
    id: z.string().optional(),
    description: refable(z.string()).optional(),
    size: z.number().int().optional(),
    token: refable(z.string()).optional(),
    password: refable(z.string()).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    protect: z.boolean().optional(),
  }),
  api: { list: 'listWidgets' },
  ownership: { by: 'metadata' },
  fields: [
    { name: 'description', desired: (d) => d.description, live: (l) => l.description },
    { name: 'size', desired: (d) => d.size, live: (l) => l.size },
    { name: 'token', desired: (d) => d.token, live: (l) => l.token, sensitive: true },
    { name: 'password', desired: (d) => d.password, live: () => undefined, writeOnly: true },
  ],
  readiness: (l) =>
    l.state === 'ok'
      ? { state: 'ready', message: 'serving' }
      : { state: 'pending', message: `waiting for ${String(l.state)}` },
  prune: true,
  order: 100,
};

/** Matched by its host; its reference to a widget written by the widget's imported name. */
const GADGET: KindDefinition = {
  kind: 'gadget',
  plural: 'gadgets',
  manifestKinds: ['Gadget'],
  description: 'A gadget, keyed by host.',
  schema: z.strictObject({
    kind: z.literal('Gadget'),
    name,
    id: z.string().optional(),
    host: z.string(),
    widget: z.string().optional(),
  }),
  api: { list: 'listGadgets' },
  ownership: { by: 'key', key: (l) => String(l.host), declared: (d) => String(d.host) },
  toManifest: (l, names) => ({
    host: l.host,
    ...(typeof l.widget_id === 'string' ? { widget: names('widget', l.widget_id) } : {}),
  }),
  prune: false,
  order: 110,
};

const TEST_KINDS = [...KINDS, WIDGET, GADGET];
const mark = (owner: string, n: string, labels: Record<string, string> = {}) =>
  JSON.stringify({ ...labels, 'edgesync/owner': owner, 'edgesync/name': n });

const widgets: LiveRecord[] = [
  {
    id: 'wid_1',
    description: 'front',
    size: 3,
    token: 'tok-live-value',
    state: 'ok',
    metadata: mark('default', 'alpha', { team: 'a' }),
  },
  { id: 'wid_2', metadata: mark('team-b', 'beta') },
  { id: 'wid_3', name: 'Loose One', size: 1, metadata: '' },
];
const gadgets: LiveRecord[] = [{ id: 'gad_1', host: 'api.example.com', widget_id: 'wid_1' }];

function snapshot(resources: Record<string, LiveRecord[]>): LiveSnapshot {
  return {
    tlsEdges: [],
    httpsEdges: [],
    botUsers: [],
    cloudEndpoints: [],
    resources,
    calls: {},
  };
}

const live = snapshot({ widget: widgets, gadget: gadgets });
const options = { owner: 'default', schemaUrl: 'schema.json', kinds: TEST_KINDS };

function doc(text: string): Record<string, unknown> {
  return parse(text.replace(/^# yaml-language-server:.*\n/, '')) as Record<string, unknown>;
}

describe('a kind defined only here', () => {
  it('is imported from its definition: claimed by its mark or key, secrets as { env }', () => {
    const result = importLive(live, options);
    expect(result.files.map((f) => [f.file, f.kind, f.adopts])).toEqual([
      ['widget-alpha.yaml', 'Widget', undefined],
      ['gadget-api.example.com.yaml', 'Gadget', 'gad_1'],
    ]);
    const [alpha, gadget] = result.files.map((f) => doc(f.text));
    expect(alpha).toEqual({
      kind: 'Widget',
      name: 'alpha',
      description: 'front',
      size: 3,
      token: { env: 'EDGESYNC_WIDGET_ALPHA_TOKEN' },
      password: { env: 'EDGESYNC_WIDGET_ALPHA_PASSWORD' },
      metadata: { team: 'a' },
    });
    // The reference is written by the name the widget's file got; `id:` adopts the gadget.
    expect(gadget).toEqual({
      kind: 'Gadget',
      name: 'api.example.com',
      id: 'gad_1',
      host: 'api.example.com',
      widget: 'alpha',
    });
    expect(result.secrets).toEqual([
      { env: 'EDGESYNC_WIDGET_ALPHA_TOKEN', address: 'widget.alpha', path: 'token' },
      { env: 'EDGESYNC_WIDGET_ALPHA_PASSWORD', address: 'widget.alpha', path: 'password' },
    ]);
    expect(result.files.map((f) => f.text).join('')).not.toContain('tok-live-value');
    expect(result.notes).toEqual([
      'wid_2: owned by "team-b", skipped (import with --owner team-b)',
      '1 widget not managed by edgesync was skipped (import them with --all; applying adopts them)',
    ]);
    // The documents are what the kind's schema accepts (secrets once filled in).
    const filled = { ...alpha, token: 'x', password: 'y' };
    expect(WIDGET.schema?.safeParse(filled).success).toBe(true);
    expect(GADGET.schema?.safeParse(gadget).success).toBe(true);
    // The live records are left as they were.
    expect(widgets[0]?.token).toBe('tok-live-value');
  });

  it('with --all, adopts an unmarked record by ID under a name made from it', () => {
    const result = importLive(live, { ...options, all: true });
    const loose = result.files.find((f) => f.adopts === 'wid_3');
    expect(loose?.file).toBe('widget-loose-one.yaml');
    expect(doc(loose?.text ?? '')).toMatchObject({ name: 'loose-one', id: 'wid_3', size: 1 });
  });

  it('is not imported when it is not among the kinds', () => {
    expect(importLive(live, { ...options, kinds: KINDS }).files).toEqual([]);
  });

  it("has its readiness in the report's resources and in /status", () => {
    const plan = {
      changes: [
        { kind: 'widget', address: 'widget.alpha', action: 'noop', id: 'wid_1', fields: [] },
        {
          kind: 'widget',
          address: 'widget.loose',
          action: 'update',
          reason: 'changed size',
          id: 'wid_3',
          fields: [{ path: 'size' }],
        },
        { kind: 'gadget', address: 'gadget.api', action: 'noop', id: 'gad_1', fields: [] },
      ],
      blocked: [],
    } as unknown as Plan;
    const resources = resourcesOf(plan, [], live, TEST_KINDS);
    expect(resources.noop).toEqual([
      {
        address: 'widget.alpha',
        kind: 'widget',
        id: 'wid_1',
        readiness: { state: 'ready', message: 'serving' },
      },
      // A kind without `readiness` gets none.
      { address: 'gadget.api', kind: 'gadget', id: 'gad_1' },
    ]);
    // The daemon's readiness events read the no-op entries of the kinds that read readiness.
    expect(readableOf(resources.noop)).toEqual([resources.noop[0]]);
    expect(readableOf(structuredClone(resources.noop))).toBeUndefined();
    expect(resources.changes[0]?.readiness).toEqual({
      state: 'pending',
      message: 'waiting for undefined',
    });
    const status = reduceStatus(INITIAL_STATUS, {
      report: { result: 'drift', summary: EMPTY_SUMMARY, writes: 0, resources },
      reason: 'resync',
      startedAt: 0,
      at: 1,
      resolved: { realDir: '/repo', revision: undefined },
      superseded: false,
    });
    expect(status.resources.map((r) => [r.address, r.state, r.readiness?.state])).toEqual([
      ['gadget.api', 'in_sync', undefined],
      ['widget.alpha', 'in_sync', 'ready'],
      ['widget.loose', 'out_of_sync', 'pending'],
    ]);
    expect(status.resources.find((r) => r.address === 'gadget.api')).not.toHaveProperty(
      'readiness',
    );
  });

  it('is in the JSON Schema, described by its definition', () => {
    const schema = manifestJsonSchema(TEST_KINDS);
    const documents = schema.oneOf as {
      properties: { kind: { const: string }; token?: { anyOf?: unknown[] } };
      description?: string;
    }[];
    const kinds = documents.map((d) => d.properties.kind.const);
    // The registry's kinds, then the two of this test.
    expect(kinds.slice(0, 2)).toEqual(['TLSEdge', 'HTTPSEdge']);
    expect(kinds).toContain('CloudEndpoint');
    expect(kinds.slice(-2)).toEqual(['Widget', 'Gadget']);
    const widget = documents[kinds.indexOf('Widget')];
    expect(widget?.description).toBe('A widget of the test account.');
    expect(widget?.properties.token?.anyOf).toContainEqual({ $ref: '#/$defs/SecretRef' });
    expect(schema.description).toContain('a Widget or a Gadget.');
    // Without it, the registry's schema is as committed.
    expect(manifestJsonSchema().oneOf).toHaveLength(kinds.length - 2);
  });

  it('is released when owned by its mark, and refused when matched by its key', () => {
    expect(parseReleaseTarget('Widget/alpha', TEST_KINDS)).toEqual({
      kind: 'widget',
      name: 'alpha',
    });
    expect(parseReleaseTarget('widget/alpha', TEST_KINDS)).toEqual({
      kind: 'widget',
      name: 'alpha',
    });
    expect(parseReleaseTarget('Gadget/api', TEST_KINDS)).toContain(
      'gadgets carry no metadata edgesync reads and are never deleted implicitly',
    );
    expect(parseReleaseTarget('Nope/x', TEST_KINDS)).toMatch(
      /\(one of .*TLSEdge, HTTPSEdge, .*CloudEndpoint, .*Widget, .*tls_edge, https_edge, .*cloud_endpoint, .*widget\)/,
    );
    const plan = planRelease(
      [
        { kind: 'widget', name: 'alpha' },
        { kind: 'widget', name: 'beta' },
        { kind: 'widget', name: 'gamma' },
      ],
      live,
      'default',
      TEST_KINDS,
    );
    expect(plan.releases).toEqual([
      { address: 'widget.alpha', kind: 'widget', id: 'wid_1', metadata: '{"team":"a"}' },
    ]);
    expect(plan.problems).toEqual([
      'widget.beta: managed by owner "team-b", not "default" (pass --owner)',
      'widget.gamma: no widget of this kind and name is managed by owner "default"',
    ]);
  });

  it('is a kind of the managed-resources gauge', async () => {
    const metrics = createDaemonMetrics({
      defaultMetrics: false,
      kinds: TEST_KINDS.map((k) => k.kind),
    });
    expect(await metrics.render()).toContain('edgesync_managed_resources{kind="widget"} 0');
    metrics.observeReconcile({
      result: 'converged',
      durationMs: 1,
      at: 1_000,
      managed: { widget: 2 },
      consecutiveFailures: 0,
    });
    const text = await metrics.render();
    expect(text).toContain('edgesync_managed_resources{kind="widget"} 2');
    expect(text).toContain('edgesync_managed_resources{kind="gadget"} 0');
  });

  it('is counted by validate by its plural, only when declared', () => {
    const counts = { files: 1, documents: 3, widgets: 2, gadgets: 1 } as unknown as ResourceCounts;
    expect(otherKindCounts(counts, [WIDGET, GADGET])).toBe(', 2 widgets, 1 gadget');
    expect(otherKindCounts({ widgets: 0 } as unknown as ResourceCounts, [WIDGET, GADGET])).toBe('');
  });
});
