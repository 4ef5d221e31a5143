/**
 * @module
 * Which model a run uses: the one passed, else a `provider:model` spec from the options, the
 * configuration or the `CODECALL_MODEL` environment variable; `demo` is the offline stand-in.
 */
import type { CodecallConfig, LoadConfigOptions } from '../../config/index.js';
import { CodecallError } from '../../errors.js';
import {
  createLanguageModel,
  type CreateLanguageModelOptions,
} from '../../providers/create-language-model.js';
import type { LanguageModel } from '../../providers/language-model.js';
import { DEMO_MODEL_NAME, DemoLanguageModel } from '../demo-model.js';

/** Environment variable naming the default model (`provider:model` or `demo`). */
export const MODEL_ENV_VARIABLE = 'CODECALL_MODEL';

/**
 * Turns a model spec into a {@link LanguageModel}: `demo` is the offline {@link DemoLanguageModel};
 * anything else goes to {@link createLanguageModel} (`anthropic:…`, `openai:…`).
 */
export function resolveLanguageModel(spec: string, options: CreateLanguageModelOptions = {}): LanguageModel {
  if (spec.trim().toLowerCase() === DEMO_MODEL_NAME) return new DemoLanguageModel();
  return createLanguageModel(spec, options);
}

/** The options {@link chooseModel} reads. */
export interface ModelChoice {
  model?: LanguageModel | string;
  modelOptions?: CreateLanguageModelOptions;
  load?: LoadConfigOptions;
}

/** The model of an orchestrator; throws `INVALID_ARGUMENT` (field `model`) when none is chosen. */
export function chooseModel(options: ModelChoice, config: CodecallConfig): LanguageModel {
  if (typeof options.model === 'object' && options.model !== null) return options.model;
  const env = options.modelOptions?.env ?? options.load?.env ?? process.env;
  const spec = options.model ?? config.agent.model ?? env[MODEL_ENV_VARIABLE];
  if (spec === undefined || spec.trim() === '') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'No model chosen. Pass one (--model anthropic:claude-sonnet-4-6 with ANTHROPIC_API_KEY set, or ' +
        'openai:gpt-4.1 with OPENAI_API_KEY), set "agent": {"model": "…"} in the configuration or the ' +
        `${MODEL_ENV_VARIABLE} environment variable. To try codecall offline, use --model demo.`,
      { details: { field: 'model' } },
    );
  }
  return resolveLanguageModel(spec, options.modelOptions);
}
