/**
 * The certificate authority operations (account-resources.md section 4): create (the PEM's
 * rules in ca-pem.ts), get, list (with a `filter` over the kind's filterable fields), update of
 * description and metadata only (a new PEM is a delete and a create), and delete. Deleting a CA
 * a policy still names is allowed, as the specification's local implementation decides.
 */
import { z } from 'zod';
import {
  checkNotEmpty,
  describedFields,
  describedJson,
  describedWrite,
  JsonCache,
  lookup,
} from './account-common.js';
import { parseCaPem } from './ca-pem.js';
import { CA_ID_PREFIX, FILTERABLE_FIELDS } from './domain-codes.js';
import {
  type Call,
  checkBodyId,
  type HandlerDeps,
  json,
  noContent,
  type Reply,
} from './handler-common.js';
import { filteredList } from './list-filter.js';
import { type CertificateAuthorityRec, rfc3339Seconds } from './model.js';
import { obj, prefixedId } from './schema-blocks.js';
import { parseBody } from './validate.js';

const caCreateSchema = obj({ ca_pem: z.string(), ...describedFields });
const caUpdateSchema = obj({ id: prefixedId(CA_ID_PREFIX, 'id').optional(), ...describedFields });

export function certificateAuthorityHandlers({ store, render, ids, now }: HandlerDeps) {
  const cache = new JsonCache();
  const one = (rec: CertificateAuthorityRec): string =>
    cache.of(rec, () => ({
      id: rec.id,
      uri: `${render.base}/certificate_authorities/${rec.id}`,
      created_at: rec.created_at,
      ...describedJson(rec),
      ca_pem: rec.ca_pem,
      subject_common_name: rec.subject_common_name,
      not_before: rec.not_before,
      not_after: rec.not_after,
      key_usages: rec.key_usages,
      extended_key_usages: rec.extended_key_usages,
    }));
  const caOf = (call: Call) =>
    lookup(call, 'certificate authority', (id) => call.account.cas.get(id));

  return {
    createCertificateAuthority(call: Call): Reply {
      const b = parseBody(caCreateSchema, call.body);
      const rec: CertificateAuthorityRec = {
        id: ids.next(CA_ID_PREFIX),
        created_at: rfc3339Seconds(now()),
        ...describedWrite(b),
        ...parseCaPem(b.ca_pem),
      };
      const durable = store.commit({ t: 'put', k: 'ca', a: call.accountId, r: rec });
      return json(201, one(rec), durable);
    },
    getCertificateAuthority: (call: Call): Reply => json(200, one(caOf(call))),
    listCertificateAuthorities: (call: Call): Promise<Reply> =>
      filteredList(render, call, {
        collection: call.account.cas,
        key: 'certificate_authorities',
        path: '/certificate_authorities',
        one,
        fields: FILTERABLE_FIELDS.certificateAuthorities,
      }),
    updateCertificateAuthority(call: Call): Reply {
      const ca = caOf(call);
      const b = parseBody(caUpdateSchema, call.body);
      checkNotEmpty(b);
      checkBodyId(b.id, ca.id, 'id');
      const rec: CertificateAuthorityRec = {
        ...ca,
        ...describedWrite(b, ca),
      };
      const durable = store.commit({ t: 'put', k: 'ca', a: call.accountId, r: rec });
      return json(200, one(rec), durable);
    },
    deleteCertificateAuthority(call: Call): Reply {
      const ca = caOf(call);
      return noContent(store.commit({ t: 'del', k: 'ca', a: call.accountId, id: ca.id }));
    },
  };
}
