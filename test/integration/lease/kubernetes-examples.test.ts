/**
 * config-examples/kubernetes/ checked offline: every document validates against the Kubernetes
 * OpenAPI schemas (kubernetes-models 4.5, the last line that runs on Node 20), and the pieces
 * fit together (the things a schema cannot see: names, selectors, RBAC verbs, flags).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const DIR = path.resolve('config-examples/kubernetes');

// biome-ignore lint/suspicious/noExplicitAny: the models' constructors take their own shapes
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
};

// biome-ignore lint/suspicious/noExplicitAny: the YAML documents are explored freely below
type Yaml = any;

interface Doc {
  readonly file: string;
  readonly value: Record<string, Yaml>;
}

async function documents(): Promise<Doc[]> {
  const out: Doc[] = [];
  for (const file of (await readdir(DIR)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(path.join(DIR, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      const value = doc.toJS() as Record<string, Yaml> | null;
      if (value !== null) out.push({ file, value });
    }
  }
  return out;
}

const find = (docs: readonly Doc[], kind: string) => docs.filter((d) => d.value.kind === kind);

describe('config-examples/kubernetes', () => {
  it('every document is valid against the Kubernetes schemas', async () => {
    const docs = await documents();
    expect(docs.length).toBeGreaterThanOrEqual(8);
    for (const { file, value } of docs) {
      const Model = MODELS[`${value.apiVersion}/${value.kind}`];
      expect(Model, `${file}: ${value.apiVersion} ${value.kind} has no model here`).toBeDefined();
      if (Model === undefined) continue;
      expect(() => new Model(value).validate(), `${file}: ${value.kind}`).not.toThrow();
    }
  });

  it("serves the control POSTs on a loopback admin listener, where git-sync's webhook points", async () => {
    const docs = await documents();
    const [deployment] = find(docs, 'Deployment').map((d) => d.value);
    const containers: { name: string; args: string[] }[] =
      deployment?.spec.template.spec.containers;
    const edgesync = containers.find((c) => c.name === 'edgesync');
    const gitSync = containers.find((c) => c.name === 'git-sync');
    const admin = edgesync?.args[edgesync.args.indexOf('--admin-listen') + 1];
    expect(admin).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(gitSync?.args).toContain(`--webhook-url=http://${admin}/-/reconcile`);
  });

  it('takes the owner from .edgesync-owner in the checkout, made by an init container first', async () => {
    const docs = await documents();
    const [deployment] = find(docs, 'Deployment').map((d) => d.value);
    const pod = deployment?.spec.template.spec;
    const edgesync = pod.containers.find((c: { name: string }) => c.name === 'edgesync');
    // No second statement of the owner: the one written with the manifests is read.
    expect(edgesync.args).not.toContain('--owner');
    expect(JSON.stringify(edgesync.env)).not.toMatch(/OWNER/);
    for (const { value } of find(docs, 'ConfigMap')) expect(value.data.owner).toBeUndefined();
    const [init] = pod.initContainers;
    const gitSync = pod.containers.find((c: { name: string }) => c.name === 'git-sync');
    expect(init.args).toContain('--one-time');
    expect(init.image).toBe(gitSync.image);
    for (const flag of gitSync.args.filter((a: string) => /^--(repo|ref|root|link)=/.test(a))) {
      expect(init.args).toContain(flag);
    }
  });

  it('two replicas elect a leader with a service account allowed get, create, update on leases', async () => {
    const docs = await documents();
    const [deployment] = find(docs, 'Deployment').map((d) => d.value);
    const pod = deployment?.spec.template.spec;
    expect(deployment?.spec.replicas).toBe(2);
    const edgesync = pod.containers.find((c: { name: string }) => c.name === 'edgesync');
    expect(edgesync.args).toContain('--leader-elect');
    expect(edgesync.env).toContainEqual({
      name: 'POD_NAME',
      valueFrom: { fieldRef: { fieldPath: 'metadata.name' } },
    });
    expect(pod.automountServiceAccountToken).toBe(true);
    const [account] = find(docs, 'ServiceAccount').map((d) => d.value);
    expect(pod.serviceAccountName).toBe(account?.metadata.name);
    const [role] = find(docs, 'Role').map((d) => d.value);
    expect(role?.rules).toEqual([
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        verbs: ['get', 'create', 'update'],
      },
    ]);
    const [binding] = find(docs, 'RoleBinding').map((d) => d.value);
    expect(binding?.roleRef).toMatchObject({ kind: 'Role', name: role?.metadata.name });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: account?.metadata.name }]);
    const [pdb] = find(docs, 'PodDisruptionBudget').map((d) => d.value);
    expect(pdb?.spec.minAvailable).toBe(1);
    expect(deployment?.spec.template.metadata.labels).toMatchObject(pdb?.spec.selector.matchLabels);
  });

  it('git-sync is pinned to a v4 release and has a writable /tmp under a read-only root', async () => {
    const docs = await documents();
    const pod = find(docs, 'Deployment')[0]?.value.spec.template.spec;
    const gitSync = pod.containers.find((c: { name: string }) => c.name === 'git-sync');
    expect(gitSync.image).toMatch(/^registry\.k8s\.io\/git-sync\/git-sync:v4\.\d+\.\d+$/);
    expect(gitSync.securityContext.readOnlyRootFilesystem).toBe(true);
    const tmp = gitSync.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
    expect(tmp).toBeDefined();
    const volume = pod.volumes.find((v: { name: string }) => v.name === tmp.name);
    expect(volume?.emptyDir).toBeDefined();
  });
});
