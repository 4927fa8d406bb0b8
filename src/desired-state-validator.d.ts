// The desired-state validator generated at build time from
// schema/desired-state.schema.json (scripts/build/desired-state-validator.mjs):
// ajv standalone code, resolved by the bundler and by vitest.
declare module 'virtual:desired-state-validator' {
  import type { ValidateFunction } from 'ajv';
  export const validate: ValidateFunction;
  export default validate;
}
