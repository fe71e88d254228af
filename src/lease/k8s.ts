/**
 * The Lease store on Kubernetes: `coordination.k8s.io/v1` Leases through the official client
 * library (`@kubernetes/client-node` 1.4, `CoordinationV1Api`), configured from `KUBECONFIG`,
 * `~/.kube/config` or the in-cluster service account (`KubeConfig.loadFromDefault`).
 *
 * Status codes: 404 on read is "no Lease yet"; 409 is a lost race (`LeaseConflictError`); 401
 * and 403 are fatal (`LeaseAccessError`, naming the RBAC verb that is missing); anything else
 * (5xx, network, a request slower than the timeout) is an ordinary failure the elector retries.
 */
import { readFileSync } from 'node:fs';
import {
  ApiException,
  CoordinationV1Api,
  KubeConfig,
  type V1Lease,
  V1MicroTime,
} from '@kubernetes/client-node';
import { LeaseAccessError, LeaseConflictError, LeaseError } from '../errors.js';
import type { LeaseRecord, LeaseSpec, LeaseStore } from './elector.js';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace of the pod when in a cluster, else `default`. */
export function defaultLeaseNamespace(file = IN_CLUSTER_NAMESPACE): string {
  try {
    const ns = readFileSync(file, 'utf8').trim();
    return ns === '' ? 'default' : ns;
  } catch {
    return 'default';
  }
}

export interface KubernetesLeaseStoreOptions {
  readonly name: string;
  readonly namespace: string;
  /** Longest wait for one request; a slower one counts as failed. */
  readonly timeoutMs: number;
  /** A loaded KubeConfig; default: `loadFromDefault()`. */
  readonly kubeConfig?: KubeConfig;
}

function toRecord(lease: V1Lease): LeaseRecord {
  const spec = lease.spec ?? {};
  const date = (v: unknown) => (v === undefined || v === null ? undefined : new Date(String(v)));
  return {
    holder: spec.holderIdentity ?? undefined,
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: date(spec.acquireTime),
    renewTime: date(spec.renewTime),
    transitions: spec.leaseTransitions ?? 0,
    version: lease.metadata?.resourceVersion ?? '',
  };
}

/** MicroTime: the API server wants exactly six fractional digits (RFC 3339 micro). */
function micro(d: Date): V1MicroTime {
  return new V1MicroTime(d.getTime());
}

export function createKubernetesLeaseStore(options: KubernetesLeaseStoreOptions): LeaseStore {
  const { name, namespace } = options;
  const kc = options.kubeConfig ?? new KubeConfig();
  if (options.kubeConfig === undefined) kc.loadFromDefault();
  const api = kc.makeApiClient(CoordinationV1Api);
  const description = `leases/${name} in namespace ${namespace}`;

  const body = (spec: LeaseSpec, version?: string): V1Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(version === undefined ? {} : { resourceVersion: version }) },
    spec: {
      holderIdentity: spec.holder ?? '',
      leaseDurationSeconds: spec.leaseDurationSeconds,
      leaseTransitions: spec.transitions,
      ...(spec.acquireTime === undefined ? {} : { acquireTime: micro(spec.acquireTime) }),
      ...(spec.renewTime === undefined ? {} : { renewTime: micro(spec.renewTime) }),
    },
  });

  async function call<T>(verb: 'get' | 'create' | 'update', run: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new LeaseError(`${verb} ${description}: no answer in ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
    });
    try {
      return await Promise.race([run(), timeout]);
    } catch (err) {
      if (err instanceof ApiException) {
        if (err.code === 401 || err.code === 403) {
          throw new LeaseAccessError(
            err.code,
            `the Kubernetes API refused to ${verb} ${description} (HTTP ${err.code}): ` +
              `grant the service account the verbs get, create and update on ` +
              `leases.coordination.k8s.io in namespace ${namespace} (a Role and RoleBinding, ` +
              `see config-examples/kubernetes/)`,
          );
        }
        if (err.code === 409) throw new LeaseConflictError(`${verb} ${description}: conflict`);
        throw new LeaseError(`${verb} ${description}: HTTP ${err.code}`, { cause: err });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    description,
    async get() {
      try {
        return toRecord(await call('get', () => api.readNamespacedLease({ name, namespace })));
      } catch (err) {
        if (err instanceof Error && /: HTTP 404$/.test(err.message)) return undefined;
        throw err;
      }
    },
    async create(spec) {
      return toRecord(
        await call('create', () => api.createNamespacedLease({ namespace, body: body(spec) })),
      );
    },
    async replace(spec, version) {
      return toRecord(
        await call('update', () =>
          api.replaceNamespacedLease({ name, namespace, body: body(spec, version) }),
        ),
      );
    },
  };
}
