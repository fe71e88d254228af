/**
 * A certificate authority's PEM as the hosted service takes it (account-resources.md section 4):
 * exactly one block, of type CERTIFICATE, a certificate that parses, whose basic constraints make
 * it a CA; and how two PEMs are compared (the service returns the block ending with a newline
 * whatever was sent). The controller's check of a manifest's `ca_pem`; the local server states
 * the same rule on its own terms (src/server/ca-pem.ts). node:crypto's X.509 parser only.
 */
import { X509Certificate } from 'node:crypto';

/** A PEM encapsulation boundary's BEGIN line (RFC 7468), its label captured. */
const BEGIN = /^[ \t]*-----BEGIN ([^\r\n]*?)-----[ \t]*\r?$/gm;

/**
 * Why `text` is not a certificate authority's PEM, in words that never quote it; undefined when
 * it is one.
 */
export function caPemProblem(text: string): string | undefined {
  const labels = [...text.matchAll(BEGIN)].map((m) => m[1] ?? '');
  const [label] = labels;
  if (label === undefined) return 'holds no PEM block (-----BEGIN CERTIFICATE-----)';
  if (labels.length > 1) {
    return `holds ${labels.length} PEM blocks: a certificate authority is exactly one CERTIFICATE`;
  }
  if (label !== 'CERTIFICATE') return `is a ${label} block, not a CERTIFICATE`;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(text);
  } catch {
    return 'is not a certificate that parses (X.509 in PEM)';
  }
  if (!certificate.ca) {
    return 'is not a certificate authority (its basic constraints do not say CA:TRUE)';
  }
  return undefined;
}

/**
 * A PEM as compared (and sent): each line trimmed, blank lines dropped, one newline at the end,
 * so the service's trailing newline or a file's CRLF line ends are no difference.
 */
export function normalisedPem(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
