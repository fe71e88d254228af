/**
 * The controller's own credentials are never a manifest's value: an `{ env }` or `{ file }`
 * reference that names or reads the API key or the control token (from the environment, a flag
 * or a token file) is a located error that never shows the value, and nothing is written live.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../../src/manifest/diagnostics.js';
import { type LoadOptions, loadManifests } from '../../../src/manifest/loader.js';
import { heldCredentials } from '../../../src/manifest/own-credentials.js';
import { startTestServer } from '../../helpers/server.js';
import { apiEnv, runCli, snapshotOf, tempDir } from '../apply/helpers.js';

const API_KEY = 'api-key-0123456789-abcdef';
const TOKEN = 'control-token-0123456789-xyz';

let tmp: Awaited<ReturnType<typeof tempDir>>;

beforeAll(async () => {
  tmp = await tempDir('edgesync-own-credentials-');
});
afterAll(async () => {
  await tmp.cleanup();
});

/** An edge whose description is `ref` (line 3; the reference's value at column 21 or 22). */
const edge = (ref: string) =>
  `kind: TLSEdge\nname: db\ndescription: ${ref}\nhostports: [db.example.com:443]\n`;

async function load(
  name: string,
  ref: string,
  options: LoadOptions,
  files: Record<string, string> = {},
): Promise<string[]> {
  const dir = path.join(tmp.dir, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'db.yaml'), edge(ref));
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(dir, file), text);
  const result = await loadManifests(dir, options);
  return result.diagnostics.map(formatDiagnostic);
}

describe('a reference to the controller’s own credentials', () => {
  it.each([
    [
      'the API key variable',
      '{ env: EDGESYNC_API_KEY }',
      { env: { EDGESYNC_API_KEY: API_KEY } },
      {},
      "db.yaml:3:21: description: environment variable EDGESYNC_API_KEY holds the API key, the controller's own credential: a manifest may not read it",
    ],
    [
      'the API key variable, even unset',
      '{ env: EDGESYNC_API_KEY }',
      { env: {} },
      {},
      'db.yaml:3:21: description: environment variable EDGESYNC_API_KEY holds the API key',
    ],
    [
      'the control token variable',
      '{ env: EDGESYNC_CONTROL_TOKEN }',
      { env: { EDGESYNC_CONTROL_TOKEN: TOKEN } },
      {},
      'db.yaml:3:21: description: environment variable EDGESYNC_CONTROL_TOKEN holds the control token',
    ],
    [
      'another variable holding the API key',
      '{ env: SOME_VALUE }',
      { env: { EDGESYNC_API_KEY: API_KEY, SOME_VALUE: API_KEY } },
      {},
      'db.yaml:3:21: description: environment variable SOME_VALUE holds the API key',
    ],
    [
      'a variable holding the key given as a flag',
      '{ env: SOME_VALUE }',
      {
        env: { SOME_VALUE: `prefix ${API_KEY}` },
        credentials: heldCredentials({ apiKey: API_KEY }),
      },
      {},
      'db.yaml:3:21: description: environment variable SOME_VALUE holds the API key',
    ],
    [
      'a file holding the control token read from its file',
      '{ file: token.txt }',
      { env: {}, credentials: heldCredentials({ controlToken: TOKEN }) },
      { 'token.txt': `${TOKEN}\n` },
      'db.yaml:3:22: description: file token.txt holds the control token',
    ],
  ])('is refused: %s', async (what, ref, options, files, expected) => {
    const lines = await load(what.replace(/\W+/g, '-'), ref, options, files);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(expected);
    for (const line of lines) {
      expect(line).not.toContain(API_KEY);
      expect(line).not.toContain(TOKEN);
    }
  });

  it('leaves any other reference alone', async () => {
    const lines = await load('other', '{ env: DESCRIPTION }', {
      env: { EDGESYNC_API_KEY: API_KEY, DESCRIPTION: 'the database' },
      credentials: heldCredentials({ apiKey: API_KEY, controlToken: TOKEN }),
    });
    expect(lines).toEqual([]);
  });
});

describe('apply with `description: { env: EDGESYNC_API_KEY }`', () => {
  it('writes nothing live and never prints the key', async () => {
    const server = await startTestServer();
    try {
      const dir = path.join(tmp.dir, 'apply');
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, 'db.yaml'), edge('{ env: EDGESYNC_API_KEY }'));
      const run = await runCli(['apply', dir, '--yes'], { env: apiEnv(server.url, server.apiKey) });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /db\.yaml:3:21: description: environment variable EDGESYNC_API_KEY holds the API key/,
      );
      expect(run.stderr + run.stdout).not.toContain(server.apiKey);
      const live = await snapshotOf(server.url, server.apiKey);
      expect(live.tlsEdges).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
