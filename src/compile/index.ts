/**
 * @module
 * Compilation of model code: script compilation (esbuild) and, from its own files, JSON Schema
 * → TypeScript declarations. Curated exports only.
 */
export { compileScript, compileScriptAsync } from './compile-script.js';
export type { CompileError, CompileResult, CompileScriptOptions } from './compile-script.js';
export { renderDeclarations, type DeclarableTool, type RenderDeclarationsOptions } from './declarations.js';
