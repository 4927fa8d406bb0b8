// The desired state's schema is assembled from the registry: the document's
// own keys and each desired type's branch from its provider. The published
// file must be what the build compiles, and the assembly must follow the
// registry it is given.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { desiredStateSchema, desiredStateSchemaText } from '../../src/resources/schema.js';
import { PROVIDERS } from '../../src/resources/index.js';

const FILE = new URL('../../schema/desired-state.schema.json', import.meta.url);

describe('the desired-state schema', () => {
  it('schema/desired-state.schema.json is the registry’s schema (run `npm run schema` after changing a provider’s branch)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(desiredStateSchemaText());
  });

  it('names exactly the desired types, each with its own branch, and not the derived FirstBoot', () => {
    const s = desiredStateSchema() as { definitions: Record<string, { properties?: Record<string, unknown> }> };
    const resource = s.definitions['resource'] as unknown as { properties: { type: { enum: string[] } }; allOf: unknown[] };
    expect([...resource.properties.type.enum].sort()).toEqual(['ModulesLoad', 'PortFree', 'PreviousCluster', 'SwapOff', 'SysctlFile']);
    expect(resource.allOf).toHaveLength(5);
    for (const t of ['ModulesLoad', 'PortFree', 'PreviousCluster', 'SwapOff', 'SysctlFile'])
      expect(s.definitions[t]!.properties!['type']).toEqual({ const: t });
    expect(s.definitions['FirstBoot']).toBeUndefined();
  });

  it('a desired type without a branch is a registry defect, said by name', () => {
    const { schema, ...bare } = PROVIDERS['SwapOff']!;
    void schema;
    expect(() => desiredStateSchema({ ...PROVIDERS, SwapOff: bare })).toThrow('provider SwapOff has no schema');
  });
});
