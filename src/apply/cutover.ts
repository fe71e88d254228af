/**
 * The cut-over's units in the executor: edges handed over to cloud endpoints, one unit per edge.
 *
 * A unit (the plan graph's, ../plan/graph.ts: `handover` edges) is an edge's cut-over
 * operations (its DELETE) followed by the operations of the endpoints whose creates `require`
 * it. Inside a unit the edge goes first, and the endpoints'
 * operations are sent as soon as its DELETE is answered, the endpoints in parallel with each
 * other: between the two answers the host and port is served by nothing, so that gap is one
 * round trip, never the rest of the plan. Units run in parallel up to the concurrency limit
 * (they are one wave of the graph).
 *
 * The cut-over stops at the first failed unit: no further edge is deleted (units not started
 * are skipped and their edges keep serving). Once an edge's DELETE was answered, its endpoints
 * are sent whatever happens elsewhere (an abort, another unit's failure): leaving them out
 * would leave its hosts and ports unserved. An endpoint not created after its edge went is
 * reported with the host and port left unserved and how to serve it again.
 */
import type { EndpointCreate } from '../api/schemas.js';
import { endpointHostport, normalizeEndpointUrl } from '../manifest/endpoint-url.js';
import { type GraphStep, planGraph, type Unit } from '../plan/graph.js';

type CutoverStep = GraphStep;

/** A host and port left unserved: its edge was deleted and its endpoint was not created. */
export interface Unserved {
  readonly hostport: string;
  /** The deleted edge: its address and ID. */
  readonly edge: string;
  readonly edgeId: string;
  /** The endpoint that was to take it over. */
  readonly endpoint: string;
}

/**
 * The cut-over units of a plan's steps, in plan order of their edges: the units of the plan's
 * graph (../plan/graph.ts) that are the cut-over's. Pure; the executor reads the same units
 * from the graph it runs.
 *
 * @internal
 */
export function cutoverUnits(steps: readonly Pick<GraphStep, 'change' | 'op'>[]): Unit[] {
  const changes = [...new Set(steps.map((s) => s.change))];
  return planGraph(changes).waves.flatMap((wave) => wave.filter((u) => u.cutover));
}

export interface CutoverRun {
  /** Sends one step (fail-closed checks included); true when it succeeded. */
  readonly runStep: (step: CutoverStep) => Promise<boolean>;
  /** Reports a step as not attempted. */
  readonly skip: (step: CutoverStep) => void;
  /** True when no new unit may start (abort, account state, fence). */
  readonly halted: () => boolean;
}

/** What the cut-over's units did so far in a run (units run in parallel and share it). */
export interface CutoverState {
  readonly unserved: Unserved[];
  /** Edges not cut over because the cut-over stopped (they keep serving). */
  readonly notStarted: string[];
  /** Set when a unit failed: the edge it stopped at. */
  stoppedAt?: string | undefined;
}

/** One unit; see the module comment. */
export async function runCutoverUnit(
  unit: Unit,
  run: CutoverRun,
  state: CutoverState,
): Promise<void> {
  if (state.stoppedAt !== undefined || run.halted()) {
    state.notStarted.push(unit.root);
    for (const s of [...unit.lead, ...unit.follow.flat()]) run.skip(s);
    return;
  }
  let released = true;
  for (const s of unit.lead) {
    if (released) released = await run.runStep(s);
    else run.skip(s);
  }
  // Released or not, the endpoints' steps go through `runStep`: when the edge's DELETE
  // failed their `requires` is unmet and they fail closed there, unsent.
  const results = await Promise.all(unit.follow.map((list) => runRoot(list, run)));
  if (released && results.every((ok) => ok)) return;
  state.stoppedAt ??= unit.root;
  if (!released) return;
  const edge = unit.lead.at(-1)?.change;
  unit.follow.forEach((list, i) => {
    if (results[i] === true || edge === undefined) return;
    const hostport = claimedHostport(list);
    if (hostport === undefined) return;
    const endpoint = list[0]?.change.address ?? '';
    state.unserved.push({ hostport, edge: edge.address, edgeId: edge.id ?? '', endpoint });
  });
}

/** What a run's cut-over says once its units are done: unserved hosts, and where it stopped. */
export function cutoverMessages(state: CutoverState): string[] {
  const out: string[] = [];
  if (state.unserved.length > 0) out.push(unservedMessage(state.unserved));
  if (state.stoppedAt !== undefined && state.notStarted.length > 0) {
    out.push(
      `cut-over stopped at ${state.stoppedAt}: ${state.notStarted.length} edge(s) not cut over, still serving (${state.notStarted.join(', ')})`,
    );
  }
  return out;
}

/** One root's steps in order; false at the first that did not succeed (the rest skipped). */
async function runRoot(list: readonly CutoverStep[], run: CutoverRun): Promise<boolean> {
  for (const [i, s] of list.entries()) {
    if (await run.runStep(s)) continue;
    for (const rest of list.slice(i + 1)) run.skip(rest);
    return false;
  }
  return true;
}

/** The host and port an endpoint's create claims, from its body. */
function claimedHostport(list: readonly CutoverStep[]): string | undefined {
  const post = list.find((s) => s.op.method === 'POST');
  const url = (post?.op.body as Partial<EndpointCreate> | undefined)?.url;
  return typeof url === 'string' ? endpointHostport(normalizeEndpointUrl(url)) : undefined;
}

/**
 * What an apply says about unserved hosts and ports: which, since which edge went, and the two
 * ways to serve them again.
 */
export function unservedMessage(unserved: readonly Unserved[]): string {
  const list = unserved
    .map((u) => `${u.hostport} (edge ${u.edge} ${u.edgeId} deleted, ${u.endpoint} not created)`)
    .join(', ');
  return (
    `cut-over stopped: ${unserved.length} host(s) and port(s) are served by nothing: ${list}. ` +
    'To restore the edge, apply the edge manifests this directory was migrated from ' +
    '(`edgesync apply --dir <edge manifests directory>`), which recreates it; or fix the cause ' +
    'and apply this directory again, which creates the endpoint'
  );
}
