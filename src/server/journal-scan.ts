/**
 * Reading a journal log back: which records it holds, and where it is damaged. Pure (bytes in,
 * verdict out) so that every damage case is a table row in the unit tests.
 *
 * The only damage that recovery may repair silently is an incomplete final record: the unsynced
 * tail of the last batch, which was never acknowledged. Exactly that is a final segment without
 * its newline that does not hold a whole record followed by anything else (a record whose
 * newline was flipped to another byte holds a whole record plus one byte: damage, not a tear).
 * A zero-filled tail, as some file systems leave after a crash, is a tear too. Everything else
 * is damage: a complete line whose checksum fails (CRLF endings, garbage, a flipped bit), or a
 * gap in the sequence numbers (records cut out of the middle).
 */

export interface LogDamage {
  /** Byte offset of the first damaged line. */
  readonly offset: number;
  readonly reason: string;
}

export interface LogScan {
  /** Records whose checksum holds, in file order, with `s` above the snapshot's. */
  readonly records: readonly { readonly s: number }[];
  /** Bytes of the intact prefix (everything when the log is sound, less a torn final record). */
  readonly validBytes: number;
  readonly damage: LogDamage | undefined;
}

export interface SalvageReport {
  readonly file: string;
  readonly movedTo: string;
  readonly kept: number;
  readonly skipped: number;
  readonly keptBytes: number;
}

type Decode = (line: string) => unknown;

function asRecord(value: unknown): { s: number } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const s = (value as { s?: unknown }).s;
  return typeof s === 'number' && Number.isSafeInteger(s) && s > 0
    ? { ...(value as object), s }
    : undefined;
}

function lineProblem(line: string): string {
  if (line.endsWith('\r'))
    return 'the line ends with CR (CRLF line endings): not a file in the journal format';
  if (!/^[^ ]{8} \{/.test(line)) return 'not a journal record (expected "<crc32> {json}")';
  return 'the record fails its checksum';
}

/** Length of the first JSON object at `from` (string-aware brace matching), or -1. */
function objectEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

export function scanLog(bytes: Buffer, snapshotSeq: number, decode: Decode): LogScan {
  const records: { s: number }[] = [];
  let damage: LogDamage | undefined;
  let offset = 0;
  let seq = snapshotSeq;
  let validBytes = 0;
  const note = (at: number, reason: string) => {
    damage ??= { offset: at, reason };
  };
  while (offset < bytes.length) {
    const nl = bytes.indexOf(10, offset);
    if (nl < 0) {
      // The final segment, without its newline.
      const tail = bytes.subarray(offset);
      if (tail.every((b) => b === 0)) break;
      const text = tail.toString('utf8');
      const end = text.startsWith('{', 9) ? objectEnd(text, 9) : -1;
      const whole = end > 0 ? asRecord(decode(text.slice(0, end))) : undefined;
      if (whole !== undefined && end < text.length) {
        note(offset, 'a whole record followed by stray bytes where its newline should be');
      }
      // Otherwise: a torn write, dropped (validBytes stays at the last complete line).
      break;
    }
    const line = bytes.toString('utf8', offset, nl);
    const rec = asRecord(decode(line));
    if (rec === undefined) {
      note(offset, lineProblem(line));
    } else if (rec.s > seq) {
      if (damage === undefined && rec.s !== seq + 1) {
        note(
          offset,
          `records ${seq + 1}..${rec.s - 1} are missing (the sequence jumps to ${rec.s})`,
        );
      }
      records.push(rec);
      seq = rec.s;
    }
    offset = nl + 1;
    if (damage === undefined) validBytes = offset;
  }
  return { records, validBytes, damage };
}
