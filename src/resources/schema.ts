// The desired state's JSON Schema, assembled from the document's own keys
// (src/desired-state-schema.ts) and each desired type's branch
// (Provider.schema). The build compiles it (scripts/build/desired-state-validator.mjs)
// and schema/desired-state.schema.json is this, written by `npm run schema`
// (test/resources/schema.test.ts fails while the file is stale).
import { DESIRED_STATE_SCHEMA_BASE } from '../desired-state-schema.js';
import { desiredTypes, PROVIDERS, type ProviderRegistry } from './index.js';

type Json = Record<string, unknown>;

/** Pure: the schema for a desired state naming only `registry`'s desired types. */
export function desiredStateSchema(registry: ProviderRegistry = PROVIDERS): Json {
  const types = desiredTypes(registry);
  const branches: Json = {};
  for (const t of types) {
    const fragment = registry[t]!.schema;
    if (!fragment) throw new Error(`provider ${t} has no schema: a desired type needs its branch (Provider.schema)`);
    branches[t] = fragment;
  }
  const base = DESIRED_STATE_SCHEMA_BASE as unknown as Json;
  const resource = {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: types } },
    allOf: types.map((t) => ({ if: { properties: { type: { const: t } }, required: ['type'] }, then: { $ref: `#/definitions/${t}` } })),
  };
  return { ...base, definitions: { ...(base['definitions'] as Json), resource, ...branches } };
}

/** The file's bytes: two-space JSON and a final newline. */
export function desiredStateSchemaText(registry: ProviderRegistry = PROVIDERS): string {
  return `${JSON.stringify(desiredStateSchema(registry), null, 2)}\n`;
}
