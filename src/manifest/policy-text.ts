/**
 * A traffic policy as the API stores it (a YAML or JSON document in a string) read back as data,
 * for the planner's comparison and the masking of live secrets. Pure.
 */
import { parse } from 'yaml';

/**
 * The document in `text`, or undefined when it is not one (empty, or not YAML). JSON is tried
 * first: it is what edgesync sends, JSON is YAML, and `JSON.parse` is many times faster than a
 * YAML parser on the thousands of policies a full listing returns; anything else (a policy
 * written by hand as YAML) goes through `yaml`.
 */
export function parsePolicyText(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not JSON: YAML below.
  }
  try {
    return parse(text) as unknown;
  } catch {
    return undefined;
  }
}
