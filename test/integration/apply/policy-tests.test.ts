/**
 * Policy tests and the impact preview end to end (CLI in-process, local server, real files):
 * `edgesync test` reports every case with the rule that decided it and where the case is
 * written; a failing case fails `test` and `validate`, and `apply` refuses to write the
 * endpoint; the cases never reach the API; a plan that removes the guard in front of /admin
 * lists the requests that were refused and are now forwarded, flagged.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir } from './helpers.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;

const GUARD = `    - name: office only
      expressions: ["req.url.path.startsWith('/admin')"]
      actions:
        - type: restrict-ips
          config: { allow: [10.0.0.0/8] }
`;

const endpoint = (guard: string, tests: string) => `kind: CloudEndpoint
name: app
url: https://app.example.com
traffic_policy:
  on_http_request:
${guard}    - name: admin
      expressions: ["req.url.path.startsWith('/admin')"]
      actions:
        - type: forward-internal
          config: { url: https://admin.internal }
    - name: old
      expressions: ["req.url.path == '/old'"]
      actions:
        - type: custom-response
          config: { status_code: 410 }
    - name: staff
      expressions: ["req.url.path.startsWith('/staff')"]
      actions:
        - type: oauth
          config: { provider: google }
        - type: forward-internal
          config: { url: https://staff.internal }
    - name: app
      actions:
        - type: forward-internal
          config: { url: https://app.internal }
${tests}`;

const TESTS = `tests:
  - name: admin from outside is refused
    request: { method: GET, url: https://app.example.com/admin, client_ip: 203.0.113.9,
               headers: { x-team: [ops] } }
    expect: { status: 403 }
  - name: the app is served
    request: { url: https://app.example.com/ }
    expect: { forward: https://app.internal }
  - name: old path is gone
    request: { url: https://app.example.com/old }
    expect: { status: 410 }
  - name: staff log in
    request: { url: https://app.example.com/staff }
    expect: { auth: google }
`;

describe('policy tests and the impact preview (CLI, local server)', () => {
  let server: Server;
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer();
    tmp = await tempDir();
    env = apiEnv(server.url, server.apiKey);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('edgesync test reports each case, its deciding rule and its place', async () => {
    const dir = path.join(tmp.dir, 'pass');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    await writeFile(path.join(dir, 'app.yaml'), endpoint(GUARD, TESTS));
    const run = await runCli(['test', dir], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      'PASS app.yaml:33:5: app: admin from outside is refused: refused by restrict-ips (403) (decided by on_http_request[0] "office only" actions[0] (restrict-ips))',
    );
    expect(run.stderr).toContain(
      'PASS app.yaml:43:5: app: staff log in: oauth google (decided by on_http_request[3] "staff" actions[0] (oauth))',
    );
    expect(run.stderr).toContain('4 policy tests, 4 passed, 0 failed');
    const json = await runCli(['test', dir, '--output', 'json'], { env });
    const report = JSON.parse(json.stdout) as { passed: boolean; cases: { name: string }[] };
    expect(report.passed).toBe(true);
    expect(report.cases.map((c) => c.name)).toHaveLength(4);
    expect((await runCli(['validate', dir], { env })).code).toBe(0);
  });

  it('a change that drops the /admin guard fails its case: test, validate and apply refuse it', async () => {
    const dir = path.join(tmp.dir, 'guarded');
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
    await writeFile(path.join(dir, 'app.yaml'), endpoint(GUARD, TESTS));
    const first = await runCli(['apply', dir, '--yes'], { env });
    expect(first.code).toBe(0);
    const live = (await snapshotOf(server.url, server.apiKey)).cloudEndpoints;
    const stored = live.find((e) => e.url === 'https://app.example.com');
    // The cases stay in Git: the service never sees them.
    expect(stored?.traffic_policy).toContain('office only');
    expect(stored?.traffic_policy).not.toContain('tests');
    expect(stored?.traffic_policy).not.toContain('admin from outside');

    await writeFile(path.join(dir, 'app.yaml'), endpoint('', TESTS));
    const test = await runCli(['test', dir], { env });
    expect(test.code).toBe(1);
    expect(test.stderr).toContain(
      'FAIL app.yaml:28:5: app: admin from outside is refused: expected status 403; got forwarded to https://admin.internal (decided by on_http_request[0] "admin" actions[0] (forward-internal))',
    );
    const validate = await runCli(['validate', dir], { env });
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(
      /app\.yaml:28:5.*policy test "admin from outside is refused" failed: expected status 403; got forwarded to https:\/\/admin\.internal/,
    );
    const apply = await runCli(['apply', dir, '--yes'], { env });
    expect(apply.code).toBe(1);
    const after = (await snapshotOf(server.url, server.apiKey)).cloudEndpoints;
    expect(after.find((e) => e.url === 'https://app.example.com')?.traffic_policy).toBe(
      stored?.traffic_policy,
    );
  });

  it('the plan lists the requests the change lets through, flagged, in text, JSON and Markdown', async () => {
    const dir = path.join(tmp.dir, 'guarded');
    // The same change, its case not declared: only the preview can show what it does.
    await writeFile(path.join(dir, 'app.yaml'), endpoint('', ''));
    const text = await runCli(['plan', dir, '--no-color'], { env });
    expect(text.stdout + text.stderr).toContain('Policy impact (requests whose outcome changes)');
    expect(text.stdout + text.stderr).toMatch(
      /! +GET https:\/\/app\.example\.com\/admin: refused by restrict-ips \(403\) -> forwarded to https:\/\/admin\.internal \[reachable without restrict-ips\]/,
    );
    const json = await runCli(['plan', dir, '--output', 'json'], { env });
    const plan = JSON.parse(json.stdout) as {
      policy_impact: {
        address: string;
        changes: { request: string; after: string; weakened?: string }[];
      }[];
    };
    const entry = plan.policy_impact.find((e) => e.address === 'cloud_endpoint.app');
    expect(entry?.changes.every((c) => c.after === 'forwarded to https://admin.internal')).toBe(
      true,
    );
    expect(entry?.changes).toContainEqual({
      request: 'GET https://app.example.com/admin',
      before: 'refused by restrict-ips (403)',
      after: 'forwarded to https://admin.internal',
      weakened: 'without restrict-ips',
    });
    // Just outside the prefix nothing changes; the office's own range still gets through.
    expect(entry?.changes.map((c) => c.request)).not.toContain('GET https://app.example.com/admi');
    const md = await runCli(['plan', dir, '--output', 'markdown'], { env });
    expect(md.stdout).toContain('**Policy impact (requests whose outcome changes)**');
    expect(md.stdout).toContain('(reachable without restrict-ips)');
  });
});
