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

/** Graph evidence for one tool. */
export interface Credit {
  /** Sum of the scores of the paths that reached it. */
  score: number;
  /** The best single path score, whose step gives the reason. */
  best: number;
  step: Step;
}

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

/** Neighbour lists of tools, as {@link neighbours} gives them. */
export interface NeighbourCache {
  forward: Map<string, Step[]>;
  backward: Map<string, Step[]>;
}

/** Options of {@link walkGraph}. */
export interface WalkOptions {
  /**
   * Whether the chains are wanted (false: `paths` comes back empty, the credits are the same).
   * @defaultValue true
   */
  chains?: boolean;
  /**
   * Neighbour lists kept across walks, by tool, successors and predecessors apart: the caller
   * clears them whenever the graph, the catalog or the ranking options differ.
   */
  neighbours?: NeighbourCache | undefined;
}

/**
 * Beam search from the best lexical matches: each step extends every kept path by one tool
 * after its last node or before its first, scoring `path score × edge weight`; the best
 * `beamWidth` paths survive each step. A tool's graph credit is the sum of the scores of the
 * paths that reached it (several lexical hits pointing at one tool is stronger evidence than
 * one); its reason is the strongest path's last step.
 */
export function walkGraph(
  view: GraphView,
  seeds: Array<[string, number]>,
  ranking: ResolvedRankingOptions,
  options: WalkOptions = {},
): { credits: Map<string, Credit>; paths: Path[] } {
  let beam: Path[] = seeds.map(([name, score]) => ({ nodes: [name], score, steps: [] }));
  const credits = new Map<string, Credit>();
  const paths: Path[] = [];
  const cache = options.neighbours ?? {
    forward: new Map<string, Step[]>(),
    backward: new Map<string, Step[]>(),
  };
  const around = (node: string, forward: boolean): Step[] => {
    const lists = forward ? cache.forward : cache.backward;
    let steps = lists.get(node);
    if (!steps) {
      steps = neighbours(view, node, forward, ranking.beamWidth, ranking);
      lists.set(node, steps);
    }
    return steps;
  };
  for (let depth = 0; depth < ranking.beamDepth && beam.length > 0; depth++) {
    const candidates: Path[] = [];
    for (const path of beam) {
      for (const forward of [true, false]) {
        const end = forward ? path.nodes[path.nodes.length - 1]! : path.nodes[0]!;
        for (const step of around(end, forward)) {
          if (path.nodes.includes(step.node)) continue;
          const score = path.score * step.weight;
          if (score <= 0) continue;
          candidates.push({
            nodes: forward ? [...path.nodes, step.node] : [step.node, ...path.nodes],
            score,
            steps: [...path.steps, step],
          });
          const credit = credits.get(step.node);
          if (!credit) credits.set(step.node, { score, best: score, step });
          else {
            credit.score += score;
            if (score > credit.best) Object.assign(credit, { best: score, step });
          }
        }
      }
    }
    candidates.sort((a, b) => b.score - a.score);
    const seen = new Set<string>();
    beam = [];
    for (const c of candidates) {
      const key = c.nodes.join('\u0000');
      if (seen.has(key)) continue;
      seen.add(key);
      beam.push(c);
      paths.push(c);
      if (beam.length >= ranking.beamWidth) break;
    }
  }
  if (options.chains === false) return { credits, paths: [] };
  paths.sort((a, b) => b.score - a.score);
  return { credits, paths: dedupeChains(paths) };
}

/** Keeps the best-scored path of each set of tools (A→B and B→A reached twice are one chain). */
function dedupeChains(paths: Path[]): Path[] {
  const seen = new Set<string>();
  return paths.filter((p) => {
    const key = [...p.nodes].sort().join('\u0000');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
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
