/** A writable stream that keeps what was written: a command's stdout or stderr, in-process. */
import { Writable } from 'node:stream';

export class Capture extends Writable {
  text = '';
  isTTY: boolean;

  constructor(isTTY = false) {
    super();
    this.isTTY = isTTY;
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }

  /** The JSON log lines written so far. */
  lines(): Record<string, unknown>[] {
    return this.text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}
