/**
 * @module
 * The tool graph as search walks it: the effective edge weights out of (into) a tool, observed
 * counts mixed with links inferred from the schemas; the beam search from the best lexical
 * matches that credits the tools a task's chain needs; and the listing of graph edges.
 */
import { describeLink, type CatalogLinks, type InferredLink } from './catalog-links.js';
import type { ResolvedRankingOptions } from './options.js';
import type { ToolGraph } from './tool-graph.js';
import type { GraphEdgesOptions, ToolGraphEdge } from './tool-search-types.js';
import { round } from './search-reasons.js';

/** One edge the walk may take; its reason is formatted only if it reaches the result. */
export interface Step {
  /** The node added. */
  node: string;
  /** The node it was reached from. */
  from: string;
  /** True when `node` is called after `from`; false when before. */
  forward: boolean;
  weight: number;
  /** Observed runs behind the edge, and all observed transitions out of (into) `from`. */
  count: number;
  total: number;
  /** Set when the edge is only inferred from the schemas. */
  link?: InferredLink;
}

/** A chain the walk found, its tools by name in call order. */
export interface Path {
  nodes: string[];
  score: number;
  steps: Step[];
}

/** What the walk reads: the learned graph, the inferred links (built on first use), the catalog. */
export interface GraphView {
  readonly graph: ToolGraph;
  links(): CatalogLinks;
  /** Whether `name` is in the catalog (the graph may remember tools that left it). */
  has(name: string): boolean;
  /** The entry id of a tool of the catalog, or undefined when it is not in it. */
  idOf(name: string): number | undefined;
  /** The name of the tool with entry id `id`. */
  nameOf(id: number): string;
  /** One more than the largest entry id (typed arrays indexed by id need this length). */
  capacity(): number;
  /** Every tool of the catalog. */
  names(): Iterable<string>;
}

const NO_LINKS: ReadonlyMap<string, InferredLink> = new Map();

/**
 * The `k` heaviest successors (forward) or predecessors (backward) of `node` in the catalog,
 * with their effective weights `(max(0, count − δ) + prior) / (total + κ)`.
 */
export function neighbours(
  view: GraphView,
  node: string,
  forward: boolean,
  k: number,
  ranking: ResolvedRankingOptions,
): Step[] {
  const { graph } = view;
  const observed = forward ? graph.successors(node) : graph.predecessors(node);
  const total = forward ? graph.outTotal(node) : graph.inTotal(node);
  const inferred: ReadonlyMap<string, InferredLink> =
    ranking.inferredEdgeShare > 0
      ? forward
        ? view.links().successors(node)
        : view.links().predecessors(node)
      : NO_LINKS;
  const denominator = total + ranking.evidencePrior;
  if (denominator <= 0) return [];
  const prior = inferred.size > 0 ? (ranking.evidencePrior * ranking.inferredEdgeShare) / inferred.size : 0;
  // A bounded buffer of the k best, so hubs with many successors allocate nothing per edge.
  const best: Step[] = [];
  const offer = (other: string, weight: number, count: number, link: InferredLink | undefined): void => {
    if (best.length === k) {
      const last = best[k - 1]!;
      if (weight < last.weight || (weight === last.weight && other > last.node)) return;
    }
    if (!view.has(other)) return;
    const step: Step = { node: other, from: node, forward, weight, count, total };
    if (link) step.link = link;
    let at = best.length;
    while (
      at > 0 &&
      (best[at - 1]!.weight < weight || (best[at - 1]!.weight === weight && best[at - 1]!.node > other))
    )
      at--;
    best.splice(at, 0, step);
    if (best.length > k) best.pop();
  };
  for (const [other, count] of observed) {
    offer(
      other,
      (Math.max(0, count - ranking.edgeDiscount) + (inferred.has(other) ? prior : 0)) / denominator,
      count,
      undefined,
    );
  }
  for (const [other, link] of inferred) {
    if (!observed.has(other)) offer(other, prior / denominator, 0, link);
  }
  return best;
}

/**
 * Neighbour lists of tools by entry id, as {@link neighbours} gives them, successors and
 * predecessors apart, flat: the lists side by side in one pool of entry ids, one of weights and
 * one of steps (kept to word the reasons of what reaches the result), each list's bounds in one
 * array indexed by id and direction (a walk reads a dozen lists per query: three arrays, no object
 * per list). Filled as the walk asks and emptied whenever the graph changes (the caller clears),
 * with the lists set recorded so clearing costs what was kept, not the catalog's size.
 */
export class NeighbourCache {
  /** Per slot (`2 · id` successors, `2 · id + 1` predecessors): its first pool index + 1 (0: not kept), its end. */
  #bounds = new Int32Array(0);
  /** Entry ids of the neighbours, all lists side by side. */
  ids = new Int32Array(64);
  /** Their effective weights, as {@link neighbours} gives them. */
  weights = new Float64Array(64);
  /** Their steps. */
  readonly steps: Step[] = [];
  /** Pool entries used. */
  #used = 0;
  /** Slots set since the last clear. */
  readonly #kept: number[] = [];

  /** Lists kept. */
  get size(): number {
    return this.#kept.length;
  }

  /** Where the list of `id` in one direction starts in the pool, or −1 when it is not kept. */
  start(id: number, forward: boolean): number {
    const at = 2 * (2 * id + (forward ? 0 : 1));
    return at < this.#bounds.length ? this.#bounds[at]! - 1 : -1;
  }

  /** Where the list of `id` in one direction ends in the pool (kept lists only). */
  end(id: number, forward: boolean): number {
    return this.#bounds[2 * (2 * id + (forward ? 0 : 1)) + 1]!;
  }

  /** Keeps the list of `id` in one direction (a list kept before is replaced); returns its start. */
  set(
    id: number,
    forward: boolean,
    ids: ArrayLike<number>,
    weights: ArrayLike<number>,
    steps: readonly Step[],
  ): number {
    const slot = 2 * id + (forward ? 0 : 1);
    if (this.#bounds.length <= 2 * slot + 1) {
      const bounds = new Int32Array(Math.max(64, 4 * (slot + 1)));
      bounds.set(this.#bounds);
      this.#bounds = bounds;
    }
    const start = this.#used;
    const end = start + ids.length;
    if (end > this.ids.length) {
      const size = Math.max(2 * this.ids.length, end);
      const grownIds = new Int32Array(size);
      grownIds.set(this.ids.subarray(0, start));
      this.ids = grownIds;
      const grownWeights = new Float64Array(size);
      grownWeights.set(this.weights.subarray(0, start));
      this.weights = grownWeights;
    }
    for (let i = 0; i < ids.length; i++) {
      this.ids[start + i] = ids[i]!;
      this.weights[start + i] = weights[i]!;
      this.steps[start + i] = steps[i]!;
    }
    this.#used = end;
    if (this.#bounds[2 * slot] === 0) this.#kept.push(slot);
    this.#bounds[2 * slot] = start + 1;
    this.#bounds[2 * slot + 1] = end;
    return start;
  }

  /** Forgets every list kept (the steps too, so they hold no catalog data alive). */
  clear(): void {
    for (const slot of this.#kept) this.#bounds[2 * slot] = 0;
    this.#kept.length = 0;
    this.#used = 0;
    this.steps.length = 0;
  }
}

/**
 * Graph credits of one walk by entry id: sums and best path scores in typed arrays (reused
 * across walks, reset by a stamp), the step of the best path kept for the reason.
 */
export class GraphCredits {
  /** Per id, its stamp, sum and best path score side by side (one cache miss per id, not three). */
  #slots = new Float64Array(0);
  #steps: Array<Step | undefined> = [];
  #round = 0;
  /** Ids credited since {@link begin}, in the order they were first credited. */
  readonly ids: number[] = [];

  /** Starts a new walk over ids below `capacity` (nothing is credited). */
  begin(capacity: number): void {
    if (this.#steps.length < capacity) {
      const size = Math.max(64, capacity * 2);
      this.#slots = new Float64Array(3 * size);
      this.#steps = new Array<Step | undefined>(size);
      this.#round = 0;
    }
    this.#round = (this.#round + 1) >>> 0;
    if (this.#round === 0) {
      this.#slots.fill(0);
      this.#round = 1;
    }
    // Steps of the last walk are dropped so they hold no catalog data alive.
    for (const id of this.ids) this.#steps[id] = undefined;
    this.ids.length = 0;
  }

  /** Whether `id` was credited in this walk. */
  has(id: number): boolean {
    return this.#slots[3 * id] === this.#round;
  }

  /** The sum of the scores of the paths that reached a credited id. */
  score(id: number): number {
    return this.#slots[3 * id + 1]!;
  }

  /** The last step of the best path that reached a credited id (its reason). */
  step(id: number): Step {
    return this.#steps[id]!;
  }

  /** Credits `id` with one path of score `score` ending in `step`. */
  add(id: number, score: number, step: Step): void {
    const slots = this.#slots;
    const at = 3 * id;
    if (slots[at] !== this.#round) {
      slots[at] = this.#round;
      this.ids.push(id);
      slots[at + 1] = score;
      slots[at + 2] = score;
      this.#steps[id] = step;
      return;
    }
    slots[at + 1]! += score;
    if (score > slots[at + 2]!) {
      slots[at + 2] = score;
      this.#steps[id] = step;
    }
  }
}

/** Options of {@link walkGraph}. */
export interface WalkOptions {
  /**
   * Chains wanted, best first (0: `paths` comes back empty, the credits are the same).
   * @defaultValue all
   */
  chains?: number;
  /**
   * Neighbour lists kept across walks, by entry id, successors and predecessors apart: the
   * caller clears them whenever the graph, the catalog or the ranking options differ.
   */
  neighbours?: NeighbourCache | undefined;
  /** Accumulators to reuse (the credits of the previous walk are dropped). */
  credits?: GraphCredits | undefined;
  /** Scratch for the extensions of a step, reused across walks (one walk at a time). */
  extensions?: Extensions | undefined;
}

/** A path of the walk: entry ids in call order and the steps that made it. */
interface IdPath {
  nodes: number[];
  score: number;
  steps: Step[];
}

/**
 * The extensions of one step of the walk, a path extended by one neighbour (an entry of the
 * neighbour pool) after its last node or before its first, not yet copied: columns in typed
 * arrays grown to the largest step seen and reused, so a step allocates nothing until an
 * extension is kept in the beam.
 */
export class Extensions {
  length = 0;
  /** Index of the extended path in the beam. */
  path = new Int32Array(64);
  /** The neighbour's entry in the {@link NeighbourCache} pool. */
  entry = new Int32Array(64);
  /** 1 after the path's last node, 0 before its first. */
  forward = new Uint8Array(64);
  /** Path score × edge weight (positive); set to −1 once taken by {@link next}. */
  score = new Float64Array(64);

  /** Empties the list (the arrays are reused). */
  reset(): void {
    this.length = 0;
  }

  push(path: number, entry: number, forward: boolean, score: number): void {
    const i = this.length;
    if (i === this.score.length) this.#grow();
    this.path[i] = path;
    this.entry[i] = entry;
    this.forward[i] = forward ? 1 : 0;
    this.score[i] = score;
    this.length = i + 1;
  }

  /**
   * Takes the best extension not yet taken and gives its index, or −1 when none is left: the
   * order of a stable sort by score, descending (the first pushed wins a tie), without sorting
   * what the beam never reads.
   */
  next(): number {
    const score = this.score;
    let best = -1;
    let bestScore = 0;
    for (let i = 0; i < this.length; i++) {
      if (score[i]! > bestScore) {
        best = i;
        bestScore = score[i]!;
      }
    }
    if (best >= 0) score[best] = -1;
    return best;
  }

  #grow(): void {
    const size = this.score.length * 2;
    const path = new Int32Array(size);
    path.set(this.path);
    this.path = path;
    const entry = new Int32Array(size);
    entry.set(this.entry);
    this.entry = entry;
    const forward = new Uint8Array(size);
    forward.set(this.forward);
    this.forward = forward;
    const score = new Float64Array(size);
    score.set(this.score);
    this.score = score;
  }
}

/** The steps of every path of a walk that returns no chain (never written). */
const NO_STEPS: Step[] = [];

/** The neighbour lists of a walk given no cache (walks are synchronous: one at a time). */
const WALK_NEIGHBOURS = new NeighbourCache();

/** Whether `kept` is `nodes` with `node` appended (`forward`) or prepended. */
function isExtension(
  kept: readonly number[],
  nodes: readonly number[],
  node: number,
  forward: boolean,
): boolean {
  if (kept.length !== nodes.length + 1) return false;
  const offset = forward ? 0 : 1;
  if (kept[forward ? nodes.length : 0] !== node) return false;
  for (let i = 0; i < nodes.length; i++) if (kept[i + offset] !== nodes[i]) return false;
  return true;
}

/**
 * Beam search from the best lexical matches (`seeds`: entry ids with scores): each step extends
 * every kept path by one tool after its last node or before its first, scoring `path score ×
 * edge weight`; the best `beamWidth` paths survive each step. A tool's graph credit is the sum of
 * the scores of the paths that reached it (several lexical hits pointing at one tool is stronger
 * evidence than one); its reason is the strongest path's last step. Paths are kept as entry ids
 * and named only for the chains returned.
 */
export function walkGraph(
  view: GraphView,
  seeds: ReadonlyArray<readonly [id: number, score: number]>,
  ranking: ResolvedRankingOptions,
  options: WalkOptions = {},
): { credits: GraphCredits; paths: Path[] } {
  let beam: IdPath[] = seeds.map(([id, score]) => ({ nodes: [id], score, steps: [] }));
  const credits = options.credits ?? new GraphCredits();
  credits.begin(view.capacity());
  const paths: IdPath[] = [];
  // Without a cache of the caller's, one of the module's, emptied before and after the walk.
  const own = options.neighbours === undefined;
  const cache = options.neighbours ?? WALK_NEIGHBOURS;
  if (own) cache.clear();
  /** The start of the list of `node` in one direction in the pool, made if not kept. */
  const around = (node: number, forward: boolean): number => {
    const start = cache.start(node, forward);
    if (start >= 0) return start;
    const steps = neighbours(view, view.nameOf(node), forward, ranking.beamWidth, ranking);
    return cache.set(
      node,
      forward,
      steps.map((step) => view.idOf(step.node)!),
      steps.map((step) => step.weight),
      steps,
    );
  };
  const width = ranking.beamWidth;
  const candidates = options.extensions ?? new Extensions();
  // Without chains wanted, a kept path's steps (read only to word a chain) are not copied.
  const limit = options.chains ?? Infinity;
  const keepSteps = limit > 0;
  for (let depth = 0; depth < ranking.beamDepth && beam.length > 0; depth++) {
    // Extensions stay (path, direction, neighbour) until one is kept in the beam: most are not,
    // and a path's arrays are copied only for those that are.
    candidates.reset();
    for (let p = 0; p < beam.length; p++) {
      const path = beam[p]!;
      const nodes = path.nodes;
      for (let direction = 0; direction < 2; direction++) {
        const forward = direction === 0;
        const tip = forward ? nodes[nodes.length - 1]! : nodes[0]!;
        const start = around(tip, forward);
        const end = cache.end(tip, forward);
        // Read after `around`, which may grow the pool.
        const { ids, weights, steps } = cache;
        for (let i = start; i < end; i++) {
          const node = ids[i]!;
          if (nodes.includes(node)) continue;
          const score = path.score * weights[i]!;
          if (score <= 0) continue;
          candidates.push(p, i, forward, score);
          credits.add(node, score, steps[i]!);
        }
      }
    }
    const previous = beam;
    beam = [];
    for (let c = candidates.next(); c >= 0; c = candidates.next()) {
      const entry = candidates.entry[c]!;
      const forward = candidates.forward[c] === 1;
      const node = cache.ids[entry]!;
      const path = previous[candidates.path[c]!]!;
      const nodes = path.nodes;
      if (beam.some((kept) => isExtension(kept.nodes, nodes, node, forward))) continue;
      const kept: IdPath = {
        nodes: forward ? [...nodes, node] : [node, ...nodes],
        score: path.score * cache.weights[entry]!,
        steps: keepSteps ? [...path.steps, cache.steps[entry]!] : NO_STEPS,
      };
      beam.push(kept);
      if (keepSteps) paths.push(kept);
      if (beam.length >= width) break;
    }
  }
  if (own) cache.clear();
  if (!keepSteps) return { credits, paths: [] };
  paths.sort((a, b) => b.score - a.score);
  return { credits, paths: bestChains(paths, limit, view) };
}

/**
 * The first `limit` paths that are distinct sets of tools (A→B and B→A reached twice are one
 * chain: the best-scored is kept), named.
 */
function bestChains(paths: readonly IdPath[], limit: number, view: GraphView): Path[] {
  const seen = new Set<string>();
  const out: Path[] = [];
  for (const p of paths) {
    if (out.length >= limit) break;
    const key = Int32Array.from(p.nodes).sort().join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ nodes: p.nodes.map((id) => view.nameOf(id)), score: p.score, steps: p.steps });
  }
  return out;
}

/** Edges of the tool graph, strongest first per source tool (see `ToolSearch.graphEdges`). */
export function listGraphEdges(
  view: GraphView,
  ranking: ResolvedRankingOptions,
  options: GraphEdgesOptions,
  minCount: number,
): ToolGraphEdge[] {
  const { graph } = view;
  const edges: ToolGraphEdge[] = [];
  const sources = new Set<string>();
  for (const [from] of graph.edges()) sources.add(from);
  if (options.includeInferred) for (const name of view.names()) sources.add(name);
  for (const from of [...sources].sort()) {
    const total = graph.outTotal(from);
    const inferred = options.includeInferred
      ? view.links().successors(from)
      : new Map<string, InferredLink>();
    const denominator = total + ranking.evidencePrior;
    const prior = inferred.size > 0 ? (ranking.evidencePrior * ranking.inferredEdgeShare) / inferred.size : 0;
    const group: ToolGraphEdge[] = [];
    for (const [to, count] of graph.successors(from)) {
      if (count < minCount) continue;
      const discounted = Math.max(0, count - ranking.edgeDiscount);
      const weight = denominator > 0 ? (discounted + (inferred.has(to) ? prior : 0)) / denominator : 0;
      group.push({
        from,
        to,
        count,
        probability: round(count / total),
        weight: round(weight),
        kind: 'observed',
      });
    }
    for (const [to, link] of inferred) {
      if (graph.count(from, to) > 0) continue;
      group.push({
        from,
        to,
        count: 0,
        probability: 0,
        weight: round(denominator > 0 ? prior / denominator : 0),
        kind: 'inferred',
        reason: describeLink(from, to, link),
      });
    }
    group.sort((a, b) => b.weight - a.weight || (a.to < b.to ? -1 : 1));
    edges.push(...group);
  }
  return edges;
}
