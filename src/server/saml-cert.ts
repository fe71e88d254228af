/**
 * The SAML module's server-made `request_signing_certificate_pem`: a real, self-signed X.509 v3
 * certificate (Ed25519, RFC 8410) for a fresh key pair, with the route's ID as common name.
 * The local server never signs SAML requests, so the private key is discarded; the certificate
 * is minted once when a route first gets a SAML module and kept (and persisted) from then on.
 * Node can sign but not build certificates, hence the small DER encoder below.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';

const OID_ED25519 = [0x06, 0x03, 0x2b, 0x65, 0x70];
const OID_COMMON_NAME = [0x06, 0x03, 0x55, 0x04, 0x03];
const TEN_YEARS_MS = 10 * 365.25 * 24 * 3600 * 1000;

function der(tag: number, content: Buffer): Buffer {
  const len = content.length;
  let head: number[];
  if (len < 0x80) head = [tag, len];
  else if (len < 0x100) head = [tag, 0x81, len];
  else head = [tag, 0x82, len >> 8, len & 0xff];
  return Buffer.concat([Buffer.from(head), content]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));

function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  const year = Number(iso.slice(0, 4));
  // X.509: UTCTime through 2049, GeneralizedTime from 2050.
  return year < 2050
    ? der(0x17, Buffer.from(`${digits.slice(2)}Z`))
    : der(0x18, Buffer.from(`${digits}Z`));
}

function name(commonName: string): Buffer {
  const cn = seq(Buffer.from(OID_COMMON_NAME), der(0x0c, Buffer.from(commonName, 'utf8')));
  return seq(der(0x31, cn));
}

/**
 * A DER INTEGER's content for a positive serial number from random bytes: the first byte in
 * 0x01-0x7f, so the number is positive (top bit clear) and minimally encoded (no leading zero
 * byte, which parsers refuse as "illegal padding").
 */
export function serialNumber(random: Buffer): Buffer {
  const serial = Buffer.from(random);
  serial[0] = (serial[0] as number) & 0x7f || 0x01;
  return serial;
}

export function makeSigningCertificate(
  commonName: string,
  nowMs: number,
  random: Buffer = randomBytes(16),
): string {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const serial = serialNumber(random);
  const algorithm = seq(Buffer.from(OID_ED25519));
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))), // version v3
    der(0x02, serial),
    algorithm,
    name(commonName),
    seq(time(nowMs), time(nowMs + TEN_YEARS_MS)),
    name(commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign(null, tbs, privateKey);
  const cert = seq(tbs, algorithm, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}
