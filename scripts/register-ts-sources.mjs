// Imported first by the repository's developer scripts (`import './register-ts-sources.mjs'`):
// they run the TypeScript sources under plain Node (type stripping), where the sources' relative
// `.js` import specifiers name `.ts` files. This resolve hook maps such a specifier to its `.ts`
// file when no `.js` file is there, so no build is needed. Plain JavaScript, so that Node can load
// it before the hook exists.
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const relative = specifier.startsWith('./') || specifier.startsWith('../');
      if (!relative || !specifier.endsWith('.js')) throw error;
      return nextResolve(`${specifier.slice(0, -'.js'.length)}.ts`, context);
    }
  },
});
