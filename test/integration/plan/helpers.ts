/**
 * Test helpers for the planner against the local server: a minimal executor of a plan's
 * operations (phases in order; within a phase, the operations of one root in plan order and
 * roots in parallel; `{address}` placeholders filled from the POSTs that bind them), raw API
 * calls for making drift and foreign edges, and temporary manifest directories.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Plan } from '../../../src/plan/model.js';

export interface Api {
  readonly url: string;
  readonly apiKey: string;
}

export async function call(
  api: Api,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${api.url}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${api.apiKey}`,
      'svc-version': '2',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${urlPath}: ${res.status} ${text}`);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}

export async function executePlan(api: Api, plan: Plan): Promise<number> {
  const ids = new Map<string, string>();
  let count = 0;
  for (const phase of ['release', 'main', 'delete'] as const) {
    const byRoot = new Map<string, Plan['changes'][number]['operations']>();
    for (const change of plan.changes) {
      for (const op of change.operations) {
        if (op.phase !== phase) continue;
        const list = byRoot.get(change.root) ?? [];
        list.push(op);
        byRoot.set(change.root, list);
      }
    }
    await Promise.all(
      [...byRoot.values()].map(async (ops) => {
        for (const op of ops) {
          const filled = op.path.replace(/\{([^}]+)\}/g, (_m, address: string) => {
            const id = ids.get(address);
            if (id === undefined) throw new Error(`unbound placeholder ${address}`);
            return id;
          });
          const result = await call(api, op.method, filled, op.body);
          count += 1;
          if (op.binds !== undefined) ids.set(op.binds, (result as { id: string }).id);
        }
      }),
    );
  }
  return count;
}

export async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'edgesync-plan-'));
}

export async function writeManifests(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await writeFile(path.join(dir, name), text);
  }
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
