/**
 * The CEL libraries are loaded when a policy needs them, not at start-up: `validate` of a
 * directory with no cloud endpoint never loads `@marcbachmann/cel-js` nor `@bufbuild/cel`
 * (they were most of its start-up), and one with a policy still has its expressions checked.
 * What the process loaded is read from Node's own module log (`NODE_DEBUG=esm,module`).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { assertFreshBuild } from '../../helpers/built.js';

const BIN = path.resolve('bin/edgesync.js');
const CEL_MODULES = /@marcbachmann[\\/]cel-js|@bufbuild[\\/]cel/;

let tmp: string | undefined;

beforeAll(() => assertFreshBuild());
afterEach(async () => {
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  tmp = undefined;
});

/** `edgesync validate DIR` with Node's module log on: its exit code, output and the log. */
async function validate(files: Record<string, string>) {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'edgesync-cel-'));
  const dir = path.join(tmp, 'm');
  await mkdir(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return promisify(execFile)(process.execPath, [BIN, 'validate', dir], {
    env: { PATH: process.env.PATH ?? '', NODE_DEBUG: 'esm,module' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { code: number; stdout: string; stderr: string }) => err);
}

it('validates edges without loading either CEL library', async () => {
  const run = await validate({
    'edges.yaml': 'kind: TLSEdge\nname: a\nhostports: [a.example.com:443]\n',
  });
  expect(run.stderr).toContain('1 manifest valid');
  expect(run.stderr).not.toMatch(CEL_MODULES);
});

it("loads the checker for a policy's expression, and reports its error", async () => {
  const run = await validate({
    'app.yaml': `kind: CloudEndpoint
name: app
url: https://app.example.com:443
traffic_policy:
  on_http_request:
    - expressions:
        - "req.url.pathh == '/a'"
      actions:
        - type: deny
    - actions:
        - type: forward-internal
          config: { url: https://web.internal }
`,
  });
  expect(run.stderr).toContain(
    'app.yaml:7:20: traffic_policy.on_http_request[0].expressions[0]: CEL: No such key: pathh',
  );
  expect(run.stderr).toMatch(CEL_MODULES);
});
