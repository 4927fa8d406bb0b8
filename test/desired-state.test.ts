// A resource's name in the plan, the journal and the reports: its `name:` when the desired state gives one, else its type.
import { describe, expect, it } from 'vitest';
import { resourceName } from '../src/desired-state.js';

describe('resourceName', () => {
  it('the name when given, the type otherwise', () => {
    expect(resourceName({ type: 'swap', name: 'no-swap' })).toBe('no-swap');
    expect(resourceName({ type: 'swap' })).toBe('swap');
  });
  it('an empty name is a name (the schema, not this, refuses it)', () => {
    expect(resourceName({ type: 'swap', name: '' })).toBe('');
  });
});
