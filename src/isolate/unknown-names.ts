/**
 * @module
 * "Unknown tool" answers with a bounded "did you mean": the name index of a catalog (shared by
 * its runs), and the per-run answerer that caps lookups at
 * {@link DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN}. In-process the host answers; in process mode
 * the host only counts and refuses the call, and the worker that runs the script looks up the
 * suggestions (see {@link SUGGEST_IN_WORKER}): a script flooding made-up names spends its
 * worker's time, not the host's.
 */
import { DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN } from '../config/defaults.js';
import { NameIndex } from '../util/edit-distance.js';
import { echoName } from './limit-table.js';

export { echoName };

/** Close matches listed for an unknown tool name. */
const MAX_SUGGESTIONS = 3;
/** Unknown names whose suggestions are remembered per catalog. */
const MAX_REMEMBERED_UNKNOWN_NAMES = 256;

/**
 * The `code` of a host's answer that refuses an unknown name and leaves the message to the
 * worker (its payload is the name). The worker replaces it with `UNKNOWN_TOOL` and the message
 * before the script sees it; it never reaches a script.
 */
export const SUGGEST_IN_WORKER = 'unknown-tool:suggest';

let lookupsMade = 0;

/** Did-you-mean lookups made in this process so far (a worker's are its own). */
export function unknownNameLookups(): number {
  return lookupsMade;
}

/** A tool as the script writes it: `tools.<namespace>.<member>`, with its qualified name. */
export interface WrittenTool {
  namespace: string;
  member: string;
  /** The qualified name, when it is spelled otherwise than `namespace.member`. */
  name?: string | undefined;
}

/** Tool names as the script may write them, indexed for cheap, bounded "did you mean". */
export class ToolNameIndex {
  readonly #index: NameIndex;
  /** Each indexed spelling → how the script writes the tool. */
  readonly #written = new Map<string, string[]>();
  /** Suggestions for names asked for recently (scripts repeat a wrong name in loops). */
  readonly #recent = new Map<string, string[]>();
  /** Tools indexed. */
  readonly size: number;

  constructor(tools: Iterable<WrittenTool>) {
    let size = 0;
    for (const tool of tools) {
      size++;
      const written = `${tool.namespace}.${tool.member}`;
      for (const spelling of new Set([tool.name ?? written, written, tool.member])) {
        const list = this.#written.get(spelling);
        if (list) list.push(written);
        else this.#written.set(spelling, [written]);
      }
    }
    this.size = size;
    this.#index = new NameIndex(this.#written.keys());
  }

  /** True when the suggestions for `name` are remembered (no lookup needed). */
  remembers(name: string): boolean {
    return this.#recent.has(name);
  }

  /** Up to {@link MAX_SUGGESTIONS} tool names close to `name`, as the script would write them. */
  closeMatches(name: string): string[] {
    const known = this.#recent.get(name);
    if (known) return known;
    lookupsMade++;
    const found = new Set<string>();
    for (const spelling of this.#index.closest(name, { limit: MAX_SUGGESTIONS * 2 })) {
      for (const written of this.#written.get(spelling) ?? []) found.add(`tools.${written}`);
    }
    const matches = [...found].slice(0, MAX_SUGGESTIONS);
    if (this.#recent.size >= MAX_REMEMBERED_UNKNOWN_NAMES) this.#recent.clear();
    this.#recent.set(name, matches);
    return matches;
  }
}

/** Answers one run's unknown names: a lookup for the first few, then none. */
export class UnknownNameAnswerer {
  #lookups = 0;

  /** `names`: the run's catalog index, or undefined when it cannot be had (no suggestions then). */
  constructor(readonly names: () => ToolNameIndex | undefined) {}

  /**
   * The message refusing `name`, and whether it took a did-you-mean lookup (answered names are
   * remembered per catalog; after {@link DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN} lookups a run
   * gets none).
   */
  answer(name: string): { message: string; lookedUp: boolean } {
    const names = this.names();
    const echoed = echoName(name);
    if (names === undefined)
      return { message: `Unknown tool "${echoed}". Check the names in \`tools\`.`, lookedUp: false };
    if (names.size === 0) {
      return { message: `Unknown tool "${echoed}". No tools are available to this script.`, lookedUp: false };
    }
    const lookup = !names.remembers(name);
    if (lookup && ++this.#lookups > DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN) {
      return {
        message: `Unknown tool "${echoed}". Check the names in \`tools\` (search_tools finds them); this script already called ${DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN} unknown names.`,
        lookedUp: false,
      };
    }
    const matches = names.closeMatches(name);
    return {
      message: `Unknown tool "${echoed}".${matches.length > 0 ? ` Did you mean: ${matches.join(', ')}?` : ' Check the names in `tools`.'}`,
      lookedUp: lookup,
    };
  }
}
