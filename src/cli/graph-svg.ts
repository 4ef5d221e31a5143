/**
 * @module
 * `codecall graph --format svg`: the DOT text of the tool graph laid out and drawn by Graphviz
 * compiled to WebAssembly (`@viz-js/viz`, an optional package loaded on first use), so no system
 * Graphviz is needed. Without the package, `PACKAGE_MISSING` names its install command. Graphviz
 * writes the labels as XML text (`&lt;`, `&amp;`, `&quot;`); the DOT it is given holds tool names
 * only as labels escaped by `dotLabel`.
 */
import type * as VizModule from '@viz-js/viz';
import { importOptional } from '../util/optional-package.js';

type Viz = VizModule.Viz;

/** The feature named in `PACKAGE_MISSING`. */
const FEATURE = '--format svg';

/**
 * Loads Graphviz (WebAssembly) for {@link renderSvg}; throws `PACKAGE_MISSING` naming
 * `npm install @viz-js/viz` when the package is not installed.
 *
 * @example
 * ```ts
 * const viz = await loadGraphviz();
 * const svg = renderSvg(viz, 'digraph { a -> b }');
 * ```
 */
export async function loadGraphviz(): Promise<Viz> {
  const { instance } = await importOptional<typeof VizModule>('@viz-js/viz', FEATURE);
  return instance();
}

/** The SVG document (an XML declaration, then `<svg>`) Graphviz draws for `dot`. */
export function renderSvg(viz: Viz, dot: string): string {
  const result = viz.render(dot, { format: 'svg', engine: 'dot' });
  if (result.status !== 'success') {
    // codecall wrote the DOT: a failure here is codecall's bug, not the user's.
    const reasons = result.errors.map((error) => error.message.trim()).join('; ');
    throw new Error(`Graphviz could not draw the tool graph: ${reasons}`);
  }
  return result.output;
}
