// The desired-state validator as ajv standalone code, generated from the
// schema the provider registry assembles (src/resources/schema.ts: the
// document's keys and each provider's branch) when the bundle (and the test
// run) is built, so that no run compiles the schema: ajv's compiler is a
// build-time tool here, and only its small runtime helpers end up in dist/.
// schema/desired-state.schema.json is the same schema, published
// (`npm run schema` writes it; a unit test fails while it is stale).
// The options are the validator's contract with src/reconcile/validate.ts
// (verbose: the error objects carry parentSchema, where x-message lives).
import path from 'node:path';
import { createRequire } from 'node:module';
import { buildSync } from 'esbuild';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(import.meta.url);

/** The module id src/reconcile/validate.ts imports; the bundler and vitest resolve it to the code below. */
export const VALIDATOR_MODULE = 'virtual:desired-state-validator';
export const SCHEMA_FILE = path.join(repo, 'schema/desired-state.schema.json');
const SCHEMA_ENTRY = path.join(repo, 'src/resources/schema.ts');

/** ESM source exporting `validate` (ajv's ValidateFunction for the desired-state schema). */
export function desiredStateValidatorSource() {
  const { Ajv } = require('ajv');
  const standaloneCode = require('ajv/dist/standalone').default;
  const schema = assembledSchema();
  const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: true, allowUnionTypes: true, code: { source: true, esm: true } });
  ajv.addVocabulary(['x-message']);
  const validate = ajv.compile(schema);
  return selfContained(standaloneCode(ajv, validate));
}

/**
 * The schema as src/resources/schema.ts assembles it from the registry: that
 * module and everything it imports, bundled to CommonJS and run here once.
 */
export function assembledSchema() {
  const r = buildSync({
    entryPoints: [SCHEMA_ENTRY],
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node18',
    write: false,
    logLevel: 'warning',
    // Only the schema is read from what this runs; a module that asks import.meta for its own file is not called.
    logOverride: { 'empty-import-meta': 'silent' },
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', r.outputFiles[0].text)(module, module.exports, require);
  return module.exports.desiredStateSchema();
}

/**
 * Standalone code names ajv's small runtime helpers with require(); esbuild
 * inlines them here, so the module is self-contained ESM for both the bundle
 * and vitest, with CommonJS interop done once, by esbuild.
 */
function selfContained(code) {
  const r = buildSync({
    stdin: { contents: code, resolveDir: repo, loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node18',
    write: false,
    logLevel: 'warning',
  });
  return `// generated from the registry's schema (src/resources/schema.ts) by scripts/build/desired-state-validator.mjs\n${r.outputFiles[0].text}`;
}

/** esbuild: resolves VALIDATOR_MODULE to the generated code (its runtime imports from node_modules). */
export function esbuildValidatorPlugin() {
  return {
    name: 'desired-state-validator',
    setup(b) {
      b.onResolve({ filter: /^virtual:desired-state-validator$/ }, () => ({ path: SCHEMA_FILE, namespace: 'desired-state-validator' }));
      b.onLoad({ filter: /.*/, namespace: 'desired-state-validator' }, () => ({
        contents: desiredStateValidatorSource(),
        loader: 'js',
        resolveDir: repo,
        watchFiles: [SCHEMA_ENTRY],
      }));
    },
  };
}

/** vite/vitest: the same module for the tests, which import src/ directly. */
export function viteValidatorPlugin() {
  const id = `\0${VALIDATOR_MODULE}`;
  return {
    name: 'desired-state-validator',
    resolveId: (source) => (source === VALIDATOR_MODULE ? id : null),
    load: (loaded) => (loaded === id ? desiredStateValidatorSource() : null),
  };
}
