/**
 * Secret values at rest in the local server: sealed (AES-256-GCM, the secret's ID as associated
 * data) as soon as a request brings them, so the records the store keeps, the journal's log and
 * snapshots, and anything that prints a record hold only the sealed form. The key lives beside
 * the journal (`secrets.key`, mode 0600, created once), so a persistent server opens what it
 * sealed before a restart; a memory-only server seals under a key of its process.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';

const KEY_FILE = 'secrets.key';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The sealed form's version, so another scheme could be told apart later. */
const PREFIX = 'v1.';

export class SecretSealer {
  readonly #key: Buffer;

  constructor(key: Buffer = randomBytes(KEY_BYTES)) {
    if (key.length !== KEY_BYTES) throw new ConfigError(`a secrets key is ${KEY_BYTES} bytes`);
    this.#key = key;
  }

  /** The value sealed for the secret `id`: base64url of IV, ciphertext and tag. */
  seal(id: string, value: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(id));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The value `seal(id, value)` sealed; throws when the key, the ID or the bytes differ. */
  open(id: string, sealed: string): string {
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const body = raw.subarray(IV_BYTES, raw.length - TAG_BYTES);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  }
}

/**
 * The sealer of a data directory: its key file read, or written (to a temporary name, synced,
 * then renamed) on first use. A key file of another size refuses the start: the secrets sealed
 * under the lost key could not be opened.
 */
export async function openSealer(dir: string): Promise<SecretSealer> {
  const path = join(dir, KEY_FILE);
  let key: Buffer;
  try {
    key = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    key = randomBytes(KEY_BYTES);
    const tmp = `${path}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(key);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  }
  if (key.length !== KEY_BYTES) {
    throw new ConfigError(
      `${path}: not a secrets key (${key.length} bytes, expected ${KEY_BYTES})`,
    );
  }
  return new SecretSealer(key);
}
