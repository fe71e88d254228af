/**
 * The policy bench's corpus (./policy.ts, ./preview-child.ts): endpoint `i`'s traffic policy,
 * 5 guarded rules and a default (paths, a method, a header list, a login), with an IP
 * restriction in front of `/admin{i}` when `guarded`. Dropping that restriction is the change
 * the preview is measured on.
 */
export function policy(i: number, guarded: boolean): Record<string, unknown> {
  const forward = (url: string) => ({ type: 'forward-internal', config: { url } });
  return {
    on_http_request: [
      ...(guarded
        ? [
            {
              name: 'office',
              expressions: [`req.url.path.startsWith('/admin${i}')`],
              actions: [{ type: 'restrict-ips', config: { allow: [`10.${i % 250}.0.0/16`] } }],
            },
          ]
        : []),
      {
        name: 'admin',
        expressions: [`req.url.path.startsWith('/admin${i}')`],
        actions: [forward('https://admin.internal')],
      },
      {
        name: 'staff',
        expressions: [`req.url.path.startsWith('/staff') && req.method != 'OPTIONS'`],
        actions: [
          { type: 'oauth', config: { provider: 'google' } },
          forward('https://staff.internal'),
        ],
      },
      {
        name: 'ops',
        expressions: [`getReqHeader('x-team').exists(t, t == 'ops${i}')`],
        actions: [
          { type: 'add-headers', config: { headers: { 'x-ops': 'yes' } } },
          forward('https://ops.internal'),
        ],
      },
      {
        name: 'old',
        expressions: [`req.url.path == '/old${i}'`],
        actions: [{ type: 'custom-response', config: { status_code: 410 } }],
      },
      { name: 'app', actions: [forward('https://app.internal')] },
    ],
  };
}
