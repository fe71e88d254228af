/**
 * The local server's SAML signing certificate: a DER certificate Node's X.509 parser reads,
 * whatever the random bytes of its serial number (a leading zero byte is illegal padding).
 */
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeSigningCertificate, serialNumber } from '../../../src/server/saml-cert.js';

const NOW = Date.UTC(2026, 10, 26);

describe('makeSigningCertificate', () => {
  it.each([
    ['a leading zero byte', [0x00, 0x10]],
    ['a leading 0x80 byte (top bit set)', [0x80, 0x10]],
    ['a leading 0xff byte', [0xff, 0xff]],
    ['an ordinary first byte', [0x42, 0x00]],
  ])('is a certificate X.509 parsers read, with %s in the random serial', (_name, head) => {
    const random = Buffer.alloc(16, 0x33);
    random.set(head);
    const pem = makeSigningCertificate('rt_123', NOW, random);
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe('CN=rt_123');
    expect(cert.serialNumber.toLowerCase()).toBe(serialNumber(random).toString('hex'));
    expect(new Date(cert.validFrom).getTime()).toBe(NOW);
  });

  it('a serial number is positive and minimally encoded', () => {
    expect([...serialNumber(Buffer.from([0x00, 0x00]))]).toEqual([0x01, 0x00]);
    expect([...serialNumber(Buffer.from([0x80, 0x05]))]).toEqual([0x01, 0x05]);
    expect([...serialNumber(Buffer.from([0xfe, 0x05]))]).toEqual([0x7e, 0x05]);
    const random = Buffer.from([0x00, 0x01]);
    serialNumber(random);
    expect([...random]).toEqual([0x00, 0x01]);
  });
});
