/**
 * The command line's reading of a daemon's `/status`: its schema held to the daemon's own type
 * (at compile time, under `npm run typecheck`), and the text form escaping what the daemon says.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { renderStatusText } from '../../../src/cli/commands/status.js';
import { daemonStatusSchema, resourcePageSchema } from '../../../src/cli/daemon-client.js';
import type { DaemonStatus, ResourcePage } from '../../../src/daemon/types.js';

describe('daemonStatusSchema and resourcePageSchema', () => {
  it("accept every document of the daemon's types", () => {
    // Compiles only while every `DaemonStatus` (`ResourcePage`) is a valid input of the schema.
    const asInput = (s: DaemonStatus): z.output<typeof daemonStatusSchema> => s;
    const pageAsInput = (p: ResourcePage): z.output<typeof resourcePageSchema> => p;
    expect(typeof asInput).toBe('function');
    expect(typeof pageAsInput).toBe('function');
  });
});

describe('renderStatusText', () => {
  const status = daemonStatusSchema.parse({
    format_version: 2,
    dir: '/m',
    resolved_dir: '/m',
    revision: null,
    ready: false,
    in_flight: false,
    last_reconcile: null,
    last_success_at: null,
    last_error: { message: 'boom\u001b[2J', at: '2026-01-01T00:00:00.000Z' },
    diagnostics_by_file: {
      'a.yaml': [{ line: 3, column: 5, path: 'name', message: 'bad', severity: 'error' }],
    },
    warnings: [],
    next_resync_at: null,
    backoff_ms: 0,
    consecutive_failures: 0,
    resync_interval_ms: 60000,
    suspended: false,
    mode: 'enforce',
    resource_counts: {
      total: 1,
      by_state: { out_of_sync: 1 },
      by_kind: { https_edge: { out_of_sync: 1 } },
    },
    leader_election: null,
  });
  const resources = resourcePageSchema.parse({
    format_version: 1,
    total: 1,
    offset: 0,
    limit: 1000,
    resources: [
      {
        kind: 'https_edge',
        address: 'https_edge.shop',
        id: 'edghts_1',
        state: 'out_of_sync',
        reason: 'update: differs',
        fields: ['description', 'routes[0].match'],
      },
    ],
  }).resources;

  it('prints the resources and errors, control characters escaped', () => {
    const text = renderStatusText(status, resources, 'http://127.0.0.1:9090');
    expect(text).toContain('Last error:    boom\\x1b[2J (2026-01-01T00:00:00.000Z)');
    expect(text).toContain(
      'https_edge  https_edge.shop  edghts_1  out_of_sync  update: differs (description, routes[0].match)',
    );
    expect(text).toContain('1 resource: 0 in sync, 1 not');
    expect(text).toContain('Manifest errors:\n  a.yaml:3:5: name: bad\n');
    expect(text).not.toContain('\u001b');
  });
});
