/**
 * A tiny HTTP client for the server's integration tests (global fetch, loopback only): sends
 * the auth and version headers unless told otherwise and returns status, headers and body.
 */
export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests index into arbitrary JSON replies
  readonly json: any;
}

export interface CallOptions {
  /** Replaces the default headers entirely (after merging `headers`). */
  readonly headers?: Record<string, string | undefined>;
  /** Sent as is instead of JSON.stringify(body). */
  readonly raw?: string | Uint8Array;
}

export type Call = (
  method: string,
  path: string,
  body?: unknown,
  options?: CallOptions,
) => Promise<Reply>;

export function clientFor(server: { url: string }, apiKey: string): Call {
  return async (method, path, body, options = {}) => {
    const headers: Record<string, string> = {};
    const merged: Record<string, string | undefined> = {
      authorization: `Bearer ${apiKey}`,
      'svc-version': '2',
      ...(body !== undefined || options.raw !== undefined
        ? { 'content-type': 'application/json' }
        : {}),
      ...options.headers,
    };
    for (const [k, v] of Object.entries(merged)) if (v !== undefined) headers[k] = v;
    const payload = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers,
      ...(payload === undefined ? {} : { body: payload }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
}

/** Every resource of the account, for "nothing changed" assertions. */
export async function snapshot(call: Call): Promise<unknown> {
  const all = async (path: string, key: string) => {
    const items: unknown[] = [];
    let next: string | null = `${path}?limit=100`;
    while (next !== null) {
      const r = await call('GET', next.replace(/^https?:\/\/[^/]+/, ''));
      if (r.status !== 200) throw new Error(`GET ${next}: ${r.status} ${r.text}`);
      items.push(...r.json[key]);
      next = r.json.next_page_uri;
    }
    return items;
  };
  return {
    tls: await all('/edges/tls', 'tls_edges'),
    https: await all('/edges/https', 'https_edges'),
    bots: await all('/bot_users', 'bot_users'),
    ipPolicies: await all('/ip_policies', 'ip_policies'),
    ipPolicyRules: await all('/ip_policy_rules', 'ip_policy_rules'),
    vaults: await all('/vaults', 'vaults'),
    secrets: await all('/vault_secrets', 'secrets'),
  };
}
