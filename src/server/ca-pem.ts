/**
 * A certificate authority's `ca_pem` (account-resources.md section 4): exactly one PEM block of
 * type CERTIFICATE (1919 none, 1910 bad headers, 1911 another type, 1912 several), a
 * certificate node:crypto parses (1920) whose basic constraints make it a CA (1913), and the
 * fields the API shows of it. Pure but for node:crypto's parser.
 */
import { X509Certificate } from 'node:crypto';
import { DOMAIN_ERROR_CODE as CODE } from './domain-codes.js';
import { RequestError } from './errors.js';
import { rfc3339Seconds } from './model.js';

export interface CaFields {
  /** The PEM as returned: the block alone, ending with a newline. */
  readonly ca_pem: string;
  readonly subject_common_name: string;
  readonly not_before: string;
  readonly not_after: string;
  readonly key_usages: string[];
  readonly extended_key_usages: string[];
}

const refuse = (code: (typeof CODE)[keyof typeof CODE], message: string) =>
  new RequestError(400, code, `ca_pem: ${message}`);

/** Encapsulation boundaries (RFC 7468): a whole line, a label of printable characters. */
const BOUNDARY =
  /^-----(BEGIN|END) ([\x21-\x2c\x2e-\x7e](?:[\x20-\x2c\x2e-\x7e]*[\x21-\x2c\x2e-\x7e])?)?-----$/;

/** The one PEM block of `text` (its label and whole text), or the refusal. */
function oneBlock(text: string): { label: string; block: string } {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const blocks: { label: string; block: string }[] = [];
  let open: { label: string; start: number } | undefined;
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line.includes('-----')) continue;
    const m = BOUNDARY.exec(line);
    if (m === null)
      throw refuse(
        CODE.badPemHeaders,
        `line ${i + 1} is not a PEM boundary ("-----BEGIN LABEL-----")`,
      );
    const [, kind, label = ''] = m;
    if (kind === 'BEGIN') {
      if (open !== undefined)
        throw refuse(CODE.badPemHeaders, `line ${i + 1}: BEGIN inside the ${open.label} block`);
      open = { label, start: i };
    } else {
      if (open === undefined || open.label !== label) {
        throw refuse(CODE.badPemHeaders, `line ${i + 1}: END ${label} without a matching BEGIN`);
      }
      blocks.push({
        label,
        block: `${lines
          .slice(open.start, i + 1)
          .map((l) => l.trim())
          .join('\n')}\n`,
      });
      open = undefined;
    }
  }
  if (open !== undefined)
    throw refuse(CODE.badPemHeaders, `the ${open.label} block has no END line`);
  const [first] = blocks;
  if (first === undefined) throw refuse(CODE.noPem, 'no PEM block (-----BEGIN CERTIFICATE-----)');
  if (blocks.length > 1)
    throw refuse(
      CODE.severalPemBlocks,
      `${blocks.length} PEM blocks; send exactly one certificate`,
    );
  if (first.label !== 'CERTIFICATE') {
    throw refuse(CODE.notCertificatePem, `a ${first.label} block; send a CERTIFICATE`);
  }
  return first;
}

/** The common name of an X.509 subject as node prints it (`CN=...` lines). */
function commonName(subject: string): string {
  for (const line of subject.split('\n')) if (line.startsWith('CN=')) return line.slice(3);
  return '';
}

/** Extended key usage OIDs by the names the API shows. */
const EXTENDED_KEY_USAGES: Readonly<Record<string, string>> = {
  '1.3.6.1.5.5.7.3.1': 'server_auth',
  '1.3.6.1.5.5.7.3.2': 'client_auth',
  '1.3.6.1.5.5.7.3.3': 'code_signing',
  '1.3.6.1.5.5.7.3.4': 'email_protection',
  '1.3.6.1.5.5.7.3.8': 'time_stamping',
  '1.3.6.1.5.5.7.3.9': 'ocsp_signing',
  '2.5.29.37.0': 'any',
};

/** The key usage bits (RFC 5280 4.2.1.3) in order, by the names the API shows. */
const KEY_USAGES = [
  'digital_signature',
  'content_commitment',
  'key_encipherment',
  'data_encipherment',
  'key_agreement',
  'cert_sign',
  'crl_sign',
  'encipher_only',
  'decipher_only',
] as const;

/** The DER of the key usage extension's OID (2.5.29.15). */
const KEY_USAGE_OID = Buffer.from([0x06, 0x03, 0x55, 0x1d, 0x0f]);

/**
 * The key usage names of a certificate. node:crypto parses the certificate but does not expose
 * this extension (its `keyUsage` is the extended one), so its value is read where the
 * extension's OID sits in the DER: `OID [BOOLEAN critical] OCTET STRING { BIT STRING }`, a
 * fixed shape of at most two bytes of flags.
 */
function keyUsages(der: Buffer): string[] {
  const at = der.indexOf(KEY_USAGE_OID);
  if (at < 0) return [];
  let i = at + KEY_USAGE_OID.length;
  if (der[i] === 0x01) i += 3; // the critical flag
  if (der[i] !== 0x04 || der[i + 2] !== 0x03) return [];
  const length = der[i + 3] ?? 0;
  const flags = der.subarray(i + 5, i + 4 + length);
  return KEY_USAGES.filter((_, bit) => (((flags[bit >> 3] ?? 0) >> (7 - (bit & 7))) & 1) === 1);
}

/** The fields of a `ca_pem`, or the 400 that refuses it. */
export function parseCaPem(text: string): CaFields {
  const { block } = oneBlock(text);
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(block);
  } catch (err) {
    throw refuse(
      CODE.unparseableCertificate,
      `not a parseable X.509 certificate (${(err as Error).message})`,
    );
  }
  if (!cert.ca) {
    throw refuse(
      CODE.notCa,
      'the certificate is not a certificate authority (its basic constraints say CA:FALSE or are absent)',
    );
  }
  return {
    ca_pem: block,
    subject_common_name: commonName(cert.subject),
    not_before: rfc3339Seconds(Date.parse(cert.validFrom)),
    not_after: rfc3339Seconds(Date.parse(cert.validTo)),
    key_usages: keyUsages(cert.raw),
    extended_key_usages: (cert.keyUsage ?? []).map((oid) => EXTENDED_KEY_USAGES[oid] ?? oid),
  };
}
