// `npm run schema`: writes schema/desired-state.schema.json, the desired
// state's JSON Schema as the provider registry assembles it (the same schema
// the build compiles into the validator). Run it after registering a
// resource or changing a provider's branch; test/resources/schema.test.ts
// fails while the file is stale.
import { writeFileSync } from 'node:fs';
import { assembledSchema, SCHEMA_FILE } from './build/desired-state-validator.mjs';

writeFileSync(SCHEMA_FILE, `${JSON.stringify(assembledSchema(), null, 2)}\n`);
console.log(`wrote ${SCHEMA_FILE}`);
