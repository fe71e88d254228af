/**
 * X.509 fixtures for the certificate authority tests, made once with openssl (EC P-256; the
 * CA valid ten years from its making, the leaf one; the server checks no validity): a CA (basic constraints CA:TRUE; key usages cert_sign, crl_sign and
 * digital_signature; extended key usages server_auth and client_auth), a leaf certificate
 * (CA:FALSE), and a public key (a PEM block that is no certificate). No private key is kept.
 */
export const CA_PEM = `-----BEGIN CERTIFICATE-----
MIIB0jCCAXigAwIBAgIUQNk3rcYEVkEo6O2YOuWS8xPbkxEwCgYIKoZIzj0EAwIw
JjEVMBMGA1UEAwwMQ29ycCBSb290IENBMQ0wCwYDVQQKDARDb3JwMB4XDTI2MTEy
OTA2MTIyMloXDTM2MTEyNjA2MTIyMlowJjEVMBMGA1UEAwwMQ29ycCBSb290IENB
MQ0wCwYDVQQKDARDb3JwMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAETE7GL0qx
h1xwgOOdGWZn5QoxonP3UMVtb1hapH0aiVKAfHWKsLBnI5q6jbmUmSBAIS2HIlu7
Yt9WZsxujVpBZaOBgzCBgDAdBgNVHQ4EFgQUUKObSpkWRKlabPy224+LEgIxc4gw
HwYDVR0jBBgwFoAUUKObSpkWRKlabPy224+LEgIxc4gwDwYDVR0TAQH/BAUwAwEB
/zAOBgNVHQ8BAf8EBAMCAYYwHQYDVR0lBBYwFAYIKwYBBQUHAwEGCCsGAQUFBwMC
MAoGCCqGSM49BAMCA0gAMEUCIQCLYc0zIF50dQijYrVaXqB3CabQhoYTIiZxHgDF
SKnZ3AIgUjn5FiA8iKxS68c0faxMyl/uecjfeuE1tzQrfCQu3kE=
-----END CERTIFICATE-----
`;

export const LEAF_PEM = `-----BEGIN CERTIFICATE-----
MIIBlTCCATugAwIBAgIUSl/K+Z4RoMBjHlgFQ4HRzNaCBLYwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQbGVhZi5leGFtcGxlLmNvbTAeFw0yNjExMjkwNjEyMjJaFw0y
NzExMjkwNjEyMjJaMBsxGTAXBgNVBAMMEGxlYWYuZXhhbXBsZS5jb20wWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAARpCCC/Av9MrHewiWzHpWXsdb9dIzPVbPKRmya6
xEESk9flnudWZc3Dl6XGoYU9lclbK1iaSLvDfYI0IE09zHIno10wWzAdBgNVHQ4E
FgQUJfrP6i2HSQPQRIcodm+xhTf3Hx8wHwYDVR0jBBgwFoAUJfrP6i2HSQPQRIco
dm+xhTf3Hx8wDAYDVR0TAQH/BAIwADALBgNVHQ8EBAMCB4AwCgYIKoZIzj0EAwID
SAAwRQIhANScZvrsCXjp5Q3Gay8GR5Ljnh4YZrJkWdU6x2QKvb1HAiBpppprV5x0
Jq/Y4MbbMI5DRJ3WVFl29t+tmdAiMhyLLQ==
-----END CERTIFICATE-----
`;

export const PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAETE7GL0qxh1xwgOOdGWZn5QoxonP3
UMVtb1hapH0aiVKAfHWKsLBnI5q6jbmUmSBAIS2HIlu7Yt9WZsxujVpBZQ==
-----END PUBLIC KEY-----
`;
