/**
 * The executor's writer stamp, from plain objects: the first stamped write of a run goes alone
 * and the others wait for its answer, then go out stamped with the actor it named; an answer
 * whose record keeps another writer calls for one metadata PATCH; a service that names no
 * writer makes nobody wait; kinds without write-only values are never touched.
 */
import { describe, expect, it } from 'vitest';
import { WriterStamps } from '../../../src/apply/writer-stamp.js';
import { storedMetadata } from '../../../src/manifest/metadata.js';

const OWN = { owner: 'default', name: 'hook', protect: false };
const meta = (writer?: string) =>
  storedMetadata(
    {
      'edgesync/digest': `digest-for-${writer ?? 'nobody'}`,
      ...(writer === undefined ? {} : { 'edgesync/by': writer }),
    },
    OWN,
  );
const stamp = (address: string, writer: string) =>
  address === 'secret.hook' ? meta(writer) : undefined;
const POST = { method: 'POST' } as const;
const answer = (writer: string | undefined, kept?: string) => ({
  id: 'secret_1',
  metadata: meta(kept),
  ...(writer === undefined ? {} : { last_updated_by: { id: writer, uri: '' } }),
});

describe('the writer stamp', () => {
  it('lets the first write go alone, then stamps the others with the actor its answer named', async () => {
    const stamps = new WriterStamps(stamp);
    const first = await stamps.before('secret.hook', 'secret', POST, { metadata: meta() });
    expect(first.release).toBeDefined();
    let waited = false;
    const second = stamps
      .before('secret.hook', 'secret', POST, { value: 'v', metadata: meta() })
      .then((r) => {
        waited = true;
        return r;
      });
    await Promise.resolve();
    expect(waited).toBe(false);
    const followUp = stamps.after('secret.hook', 'secret', answer('bot_us'));
    expect(followUp?.body).toEqual({ metadata: meta('bot_us') });
    expect(followUp?.target).toEqual({ kind: 'secret', id: 'secret_1' });
    first.release?.();
    const sent = await second;
    expect(sent.body).toEqual({ value: 'v', metadata: meta('bot_us') });
    expect(sent.release).toBeUndefined();
    // An answer whose record keeps the writer it names calls for nothing.
    expect(stamps.after('secret.hook', 'secret', answer('bot_us', 'bot_us'))).toBeUndefined();
  });

  it('a service naming no writer makes nobody wait and nothing follow', async () => {
    const stamps = new WriterStamps(stamp);
    const first = await stamps.before('secret.hook', 'secret', POST, { metadata: meta() });
    expect(stamps.after('secret.hook', 'secret', answer(undefined))).toBeUndefined();
    first.release?.();
    const next = await stamps.before('secret.hook', 'secret', POST, { metadata: meta() });
    expect(next.release).toBeUndefined();
  });

  it('leaves other kinds, deletes, bodies without a digest and a run without stamps alone', async () => {
    const stamps = new WriterStamps(stamp);
    for (const [kind, op, body] of [
      ['vault', POST, { metadata: meta() }],
      ['secret', { method: 'DELETE' }, undefined],
      ['secret', POST, { description: 'x' }],
    ] as const) {
      expect(await stamps.before('secret.hook', kind, op, body)).toEqual({ body });
    }
    expect(stamps.after('vault.hooks', 'vault', answer('bot_us'))).toBeUndefined();
    const none = new WriterStamps(undefined);
    expect(await none.before('secret.hook', 'secret', POST, { metadata: meta() })).toEqual({
      body: { metadata: meta() },
    });
    expect(none.after('secret.hook', 'secret', answer('bot_us'))).toBeUndefined();
  });
});
