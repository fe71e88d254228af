/**
 * CEL on the local server over real HTTP, two accounts: a policy's expressions are checked
 * against the service's variables and functions (a 400 naming the expression and the
 * character), pathological expressions are refused before parsing in milliseconds, and one
 * account's costly list filter runs in slices that let the other account's requests through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CEL_LIMITS } from '../../../src/hosted/cel.js';
import { ENDPOINT_ERROR_CODE as CODE } from '../../../src/server/endpoints/codes.js';
import { generateApiKey, type RunningServer } from '../../../src/server/index.js';
import { startTestServer } from '../../helpers/server.js';
import { type Call, clientFor } from './client.js';

const DENY = { actions: [{ type: 'deny' }] };
const policy = (expressions: string[]) =>
  JSON.stringify({ on_http_request: [{ expressions, ...DENY }, DENY] });

let server: RunningServer & { apiKey: string };
let a: Call;
let b: Call;

beforeAll(async () => {
  const other = generateApiKey();
  server = await startTestServer({ apiKeys: [generateApiKey(), other] });
  a = clientFor(server, server.apiKeys[0] as string);
  b = clientFor(server, other);
});
afterAll(async () => {
  await server.close();
});

describe('policy expressions are type-checked', () => {
  it.each([
    ["req.url.path.startsWith('/api') && conn.client_ip != '10.0.0.1'", 201],
    ["req.url.pathh == '/'", 'expressions[0]: invalid CEL at character 9: No such key: pathh'],
    ["request.path == '/'", 'expressions[0]: invalid CEL at character 1: Unknown variable'],
    ["1 + 'a' == 2", 'expressions[0]: invalid CEL at character 1: no such overload: int + string'],
    ['nosuch(1)', "found no matching overload for 'nosuch(int)'"],
  ])('%s', async (expression, expected) => {
    const r = await a('POST', '/endpoints', {
      url: `https://cel${Math.abs(hash(expression))}.example.com`,
      traffic_policy: policy([expression]),
    });
    if (expected === 201) {
      expect(r.status, r.text).toBe(201);
      return;
    }
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(CODE.badPolicy);
    expect(r.json.msg).toContain(expected);
  });
});

describe('pathological CEL is refused before parsing', () => {
  it('answers 20 unclosed (-(-(- expressions in one POST at once, every one listed', async () => {
    const bad = `${'(-'.repeat(340)}1`;
    const started = performance.now();
    const r = await a('POST', '/endpoints', {
      url: 'https://deep.example.com',
      traffic_policy: policy(Array.from({ length: 20 }, () => bad)),
    });
    // The parser took 17 to 40 seconds over these; the bound refuses them unread.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(r.status).toBe(400);
    expect(r.json.msg).toContain(
      `on_http_request[0].expressions[0]: invalid CEL at character 65: expression nests deeper than ${CEL_LIMITS.maxNesting} levels`,
    );
  });

  it('refuses an over-long filter with invalid_cel_expression', async () => {
    const filter = `obj.description == '${'x'.repeat(CEL_LIMITS.maxLength)}'`;
    const r = await a('GET', `/endpoints?filter=${encodeURIComponent(filter)}`);
    expect(r.status).toBe(400);
    expect(r.json.error_code).toBe(CODE.invalidCel);
    expect(r.json.msg).toContain(`at most ${CEL_LIMITS.maxLength} are allowed`);
  });
});

describe('a costly filter does not hold up the other account', () => {
  it("answers the other account while one account's filter is still running", async () => {
    for (let i = 0; i < 200; i++) {
      const r = await a('POST', '/endpoints', {
        url: `https://many${i}.example.com`,
        traffic_policy: JSON.stringify({ on_http_request: [DENY] }),
      });
      expect(r.status, r.text).toBe(201);
    }
    const words = `[${Array.from({ length: 100 }, (_, i) => `'w${i}'`).join(',')}]`;
    const filter = `${words}.all(w, !obj.url.matches('.*' + w + '.*') && obj.traffic_policy.size() > 0)`;
    let filterDone = false;
    const received = server.requests.GET ?? 0;
    const filtered = a('GET', `/endpoints?filter=${encodeURIComponent(filter)}`).then((r) => {
      filterDone = true;
      return r;
    });
    // Sent once the server has the filter's request (before, it would not have to wait).
    while ((server.requests.GET ?? 0) === received) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    const other = await b('GET', '/endpoints?limit=1');
    expect(other.status).toBe(200);
    expect(filterDone).toBe(false);
    const r = await filtered;
    expect(r.status, r.text).toBe(200);
    expect(r.json.endpoints).toHaveLength(100);
    expect(r.json.next_page_uri).not.toBeNull();
  });
});

function hash(text: string): number {
  let h = 0;
  for (const c of text) h = (h * 31 + (c.codePointAt(0) ?? 0)) | 0;
  return h;
}
