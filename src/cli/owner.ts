/**
 * The write owner: the id stored in every edge edgesync manages (`edgesync/owner`), which
 * decides what a plan may update and delete. Two directories applied to one account as the same
 * owner delete each other's edges, so a command that writes to a real API needs one chosen on
 * purpose: `--owner`, else `EDGESYNC_OWNER`, else the `.edgesync-owner` file kept with the
 * manifests (its whole content is the id). Only the embedded local server (`edgesync run` with
 * no API configured, a private sandbox) and the read-only commands fall back to `default`.
 */
import path from 'node:path';
import { checkOwner, OWNER_PATTERN } from '../engine/index.js';
import { errorMessage, UsageError } from '../errors.js';
import { DEFAULT_OWNER } from '../manifest/metadata.js';
import { readSmallTextFile } from './small-file.js';

export const OWNER_ENV = 'EDGESYNC_OWNER';
/** Kept in the manifest directory; a dot-file, so the loader never reads it as a manifest. */
export const OWNER_FILE = '.edgesync-owner';

export interface ChosenOwner {
  readonly id: string;
  /** Where it came from, in words for messages: `--owner`, `EDGESYNC_OWNER`, a path. */
  readonly from: string;
}

/**
 * The owner chosen by `--owner`, `EDGESYNC_OWNER` or `<dir>/.edgesync-owner`, in that order, or
 * undefined when none is. An invalid value in any of them is a UsageError naming its source.
 */
export async function chosenOwner(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  dir: string | undefined,
): Promise<ChosenOwner | undefined> {
  if (flag !== undefined) return { id: checkOwner(flag), from: '--owner' };
  const fromEnv = env[OWNER_ENV]?.trim();
  if (fromEnv !== undefined && fromEnv !== '') {
    return { id: checkSource(fromEnv, OWNER_ENV), from: OWNER_ENV };
  }
  if (dir === undefined) return undefined;
  const file = path.join(dir, OWNER_FILE);
  let text: string;
  try {
    text = await readSmallTextFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // No file (or no directory yet: the loader reports that one) is no choice.
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new UsageError(`${file}: cannot read the owner file: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  return { id: checkSource(text.trim(), `${file}:1`), from: file };
}

function checkSource(value: string, source: string): string {
  if (OWNER_PATTERN.test(value)) return value;
  const shown = JSON.stringify(value.length > 70 ? `${value.slice(0, 67)}...` : value);
  throw new UsageError(
    `${source}: invalid owner id ${shown}: 1-63 letters, digits, ".", "_" or "-", starting and ending with a letter or digit`,
  );
}

/** How to choose one, for the refusal and for notes. */
export function howToChooseOwner(dir: string | undefined): string {
  const file = dir === undefined ? OWNER_FILE : path.join(dir, OWNER_FILE);
  return `pass --owner ID, set ${OWNER_ENV}=ID, or write the id into ${file} (kept with the manifests)`;
}

/**
 * The owner a writing command uses: the chosen one, or a UsageError (exit 64) saying how to
 * choose one and why it matters.
 */
export function requireOwner(
  chosen: ChosenOwner | undefined,
  command: string,
  dir: string | undefined,
): ChosenOwner {
  if (chosen !== undefined) return chosen;
  throw new UsageError(
    `${command} writes to the account and no owner is chosen: ${howToChooseOwner(dir)}. ` +
      `edgesync updates and deletes only the edges of its owner, so every manifest directory ` +
      `applied to one account needs an owner of its own; two directories as one owner delete ` +
      `each other's edges. (Edges written before as the default owner: --owner ${DEFAULT_OWNER}.)`,
  );
}

/** The owner a read-only command uses: the chosen one, else the default. */
export function ownerOrDefault(chosen: ChosenOwner | undefined): ChosenOwner {
  return chosen ?? { id: DEFAULT_OWNER, from: 'the default (none chosen)' };
}
