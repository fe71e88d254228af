/**
 * The 10,000-edge corpus shared by the plan and daemon benchmarks: 5,000 TLS edges with every
 * module and 5,000 HTTPS edges with 3 routes each, 20 edges per file over 10 sub-directories.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const TLS_EDGES = 5_000;
export const HTTPS_EDGES = 5_000;
export const EDGES_PER_FILE = 20;

function tlsEdge(n: number): string {
  return `kind: TLSEdge
name: tcp-${n}
description: TCP service ${n}
metadata: { team: platform }
hostports: [tcp-${n}.example.com:443]
backend: { backend_id: bkdtg_${n}a }
ip_restriction: { ip_policy_ids: [ipp_${n}a, ipp_${n}b] }
mutual_tls: { certificate_authority_ids: [ca_${n}a] }
tls_termination: { terminate_at: edge, min_version: "1.3" }
traffic_policy: { value: { on_tcp_connect: [{ actions: [{ type: log }] }] } }
`;
}

function httpsEdge(n: number): string {
  return `kind: HTTPSEdge
name: web-${n}
description: Web application ${n}
metadata: { team: web }
hostports: [web-${n}.example.com:443, www-${n}.example.com:443]
tls_termination: { min_version: "1.2" }
routes:
  - match_type: path_prefix
    match: /
    backend: { backend_id: bkdhr_${n}a }
    compression: {}
    circuit_breaker: { tripped_duration: 10, rolling_window: 10, volume_threshold: 20, num_buckets: 10, error_threshold_percentage: 0.5 }
    response_headers: { add: { Strict-Transport-Security: max-age=63072000 }, remove: [Server] }
  - match_type: path_prefix
    match: /account
    backend: { backend_id: bkdhr_${n}a }
    oauth: { provider: { google: { client_id: cid-${n}, client_secret: secret-${n}, email_domains: [example.com] } } }
  - match_type: exact_path
    match: /hooks/stripe
    backend: { backend_id: bkdhr_${n}b }
    webhook_verification: { provider: stripe, secret: whsec_${n} }
    request_headers: { add: { X-Edge: web-${n} }, remove: [Cookie] }
`;
}

/** Writes the corpus (or one of another size, same shapes) as manifest files under `dir`. */
export async function generate(
  dir: string,
  size: { readonly tls: number; readonly https: number } = { tls: TLS_EDGES, https: HTTPS_EDGES },
): Promise<void> {
  const docs: string[] = [];
  for (let n = 0; n < size.tls; n++) docs.push(tlsEdge(n));
  for (let n = 0; n < size.https; n++) docs.push(httpsEdge(n));
  for (let f = 0; f * EDGES_PER_FILE < docs.length; f++) {
    const sub = path.join(dir, `team-${f % 10}`);
    await mkdir(sub, { recursive: true });
    const chunk = docs.slice(f * EDGES_PER_FILE, (f + 1) * EDGES_PER_FILE);
    await writeFile(path.join(sub, `edges-${f}.yaml`), chunk.join('---\n'));
  }
}
