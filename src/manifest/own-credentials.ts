/**
 * The controller's own credentials: the API key and the control token, from their flags,
 * variables and files. They are never a value a manifest may take through `{ env }` or
 * `{ file }`: a manifest is written by whoever can open a pull request, and such a reference
 * would copy the key into a live description, label or header, in clear, where every reader of
 * the account sees it. Pure.
 */
import { API_KEY_ENV } from '../api/config.js';
import { DIGEST_KEY_ENV } from './digest.js';

/** The variable holding the control token (a Kubernetes Secret's usual way in). */
export const CONTROL_TOKEN_ENV = 'EDGESYNC_CONTROL_TOKEN';

/** A credential the controller holds, and what to call it in a message (never its value). */
export interface OwnCredential {
  readonly what: string;
  readonly value: string;
}

const API_KEY = 'the API key';
const CONTROL_TOKEN = 'the control token';

/** The controller's own variables, with what each holds. */
const CREDENTIAL_ENV: Readonly<Record<string, string>> = {
  [API_KEY_ENV]: API_KEY,
  [CONTROL_TOKEN_ENV]: CONTROL_TOKEN,
  [DIGEST_KEY_ENV]: 'the secret digest key',
};

/** The credentials a command holds, however they came (a flag, a file, the embedded server). */
export function heldCredentials(held: {
  readonly apiKey?: string | undefined;
  readonly controlToken?: string | undefined;
}): OwnCredential[] {
  const out: OwnCredential[] = [];
  if (held.apiKey !== undefined) out.push({ what: API_KEY, value: held.apiKey });
  if (held.controlToken !== undefined) out.push({ what: CONTROL_TOKEN, value: held.controlToken });
  return out;
}

/**
 * Shorter credentials are compared whole: inside a longer value, a few characters prove
 * nothing. Longer ones are refused wherever they appear in the value (a file holding the key
 * on one of its lines).
 */
const MIN_CONTAINED_LENGTH = 8;

/** What a credential variable holds (`"the API key"`), or undefined for any other name. */
export function credentialVariable(name: string): string | undefined {
  return Object.hasOwn(CREDENTIAL_ENV, name) ? CREDENTIAL_ENV[name] : undefined;
}

/** The credentials `env` holds, then `given` (from flags and files), each non-empty one once. */
export function ownCredentials(
  env: Readonly<Record<string, string | undefined>>,
  given: readonly OwnCredential[] = [],
): OwnCredential[] {
  const out: OwnCredential[] = [];
  const fromEnv = Object.entries(CREDENTIAL_ENV).map(([name, what]) => ({
    what,
    value: Object.hasOwn(env, name) && typeof env[name] === 'string' ? env[name] : '',
  }));
  for (const c of [...fromEnv, ...given]) {
    const value = c.value.trim();
    if (value !== '' && !out.some((o) => o.value === value)) out.push({ what: c.what, value });
  }
  return out;
}

/** Which credential `value` holds (`"the API key"`), or undefined. */
export function credentialIn(
  value: string,
  credentials: readonly OwnCredential[],
): string | undefined {
  const trimmed = value.trim();
  return credentials.find((c) =>
    c.value.length >= MIN_CONTAINED_LENGTH ? value.includes(c.value) : trimmed === c.value,
  )?.what;
}
