/**
 * The keyed digest of write-only values (a secret's value, which the service never returns):
 * HMAC-SHA-256 under a key only the controller holds, never a bare hash (a short secret is
 * guessable from its hash). The planner keeps it in the resource's `metadata` and compares it
 * to know whether Git changed the value (and, with the writer bound in, whether someone else
 * wrote it since), so the key must be the same for every replica and
 * across restarts: it comes from the environment (`EDGESYNC_SECRET_DIGEST_KEY`) or a file
 * (`EDGESYNC_SECRET_DIGEST_KEY_FILE`, a mounted Kubernetes Secret), never from a manifest.
 */
import { createHmac } from 'node:crypto';

/** The variable holding the digest key itself. */
export const DIGEST_KEY_ENV = 'EDGESYNC_SECRET_DIGEST_KEY';
/** The variable naming a file that holds the digest key (its surrounding whitespace ignored). */
export const DIGEST_KEY_FILE_ENV = 'EDGESYNC_SECRET_DIGEST_KEY_FILE';
/** Fewer characters than this is no key (a guessable key makes the digest a bare hash). */
export const MIN_DIGEST_KEY_LENGTH = 16;

/** How to give the key, for the messages that ask for it. */
export const DIGEST_KEY_HELP = `set ${DIGEST_KEY_ENV} (at least ${MIN_DIGEST_KEY_LENGTH} characters, the same for every replica and across restarts) or ${DIGEST_KEY_FILE_ENV} to a file holding it (see docs/daemon.md)`;

/** The key from `env`, or why there is none usable (undefined: neither variable is set). */
export function digestKeyFrom(
  env: Readonly<Record<string, string | undefined>>,
  readFile: (path: string) => string,
): { readonly key: string } | { readonly problem: string } | undefined {
  const inline = Object.hasOwn(env, DIGEST_KEY_ENV) ? env[DIGEST_KEY_ENV] : undefined;
  const file = Object.hasOwn(env, DIGEST_KEY_FILE_ENV) ? env[DIGEST_KEY_FILE_ENV] : undefined;
  let key: string;
  if (inline !== undefined && inline !== '') key = inline;
  else if (file !== undefined && file !== '') {
    try {
      key = readFile(file).trim();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      return { problem: `${DIGEST_KEY_FILE_ENV}: cannot read ${file} (${String(code ?? err)})` };
    }
  } else return undefined;
  if (key.length < MIN_DIGEST_KEY_LENGTH) {
    return {
      problem: `the secret digest key is shorter than ${MIN_DIGEST_KEY_LENGTH} characters`,
    };
  }
  return { key };
}

/**
 * The digest of a resource's write-only values, by field name (order-independent), bound to the
 * actor the controller writes them as (`writer`: the service's `last_updated_by`, kept beside
 * the digest in `metadata`): only the key's holder can make a writer and a digest that agree, so
 * someone who writes the value and puts their own name beside the old digest is found out too.
 * Without a writer (one not known yet), the values alone.
 */
export function writeOnlyDigest(
  key: string,
  values: Readonly<Record<string, string>>,
  writer?: string,
): string {
  const entries = Object.keys(values)
    .sort()
    .map((k) => [k, values[k]]);
  const input = writer === undefined ? entries : { values: entries, writer };
  return `hmac-sha256:${createHmac('sha256', key).update(JSON.stringify(input)).digest('base64url')}`;
}
