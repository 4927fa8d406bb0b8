// The desired-state validator as ajv standalone code, generated from
// schema/desired-state.schema.json when the bundle (and the test run) is
// built, so that no run compiles the schema: ajv's compiler is a build-time
// tool here, and only its small runtime helpers end up in dist/.
// The options are the validator's contract with src/reconcile/validate.ts
// (verbose: the error objects carry parentSchema, where x-message lives).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { buildSync } from 'esbuild';

const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(import.meta.url);

/** The module id src/reconcile/validate.ts imports; the bundler and vitest resolve it to the code below. */
export const VALIDATOR_MODULE = 'virtual:desired-state-validator';
export const SCHEMA_FILE = path.join(repo, 'schema/desired-state.schema.json');

/** ESM source exporting `validate` (ajv's ValidateFunction for the desired-state schema). */
export function desiredStateValidatorSource() {
  const { Ajv } = require('ajv');
  const standaloneCode = require('ajv/dist/standalone').default;
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'));
  const ajv = new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: true, allowUnionTypes: true, code: { source: true, esm: true } });
  ajv.addVocabulary(['x-message']);
  const validate = ajv.compile(schema);
  return selfContained(standaloneCode(ajv, validate));
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
  return `// generated from schema/desired-state.schema.json by scripts/build/desired-state-validator.mjs\n${r.outputFiles[0].text}`;
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
        watchFiles: [SCHEMA_FILE],
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
