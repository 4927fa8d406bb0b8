// The file a SysctlFile or ModulesLoad resource owns, held to the contract the
// desired-state reference publishes (schema/desired-state.schema.json: the
// file's pattern) over the whole of NAME. The name is printed in plans, one
// change per line, and written into the run journal: a blank, a newline or a
// glob character late in a long name must be refused as surely as one at the
// start. The grammar is the second check behind the schema (load.ts runs both),
// so the two must agree on every name.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ownedFileProblem } from '../src/grammar.js';

type Dir = '/etc/sysctl.d' | '/etc/modules-load.d';

/** Every "file" property's pattern in the published schema, by the directory it names. */
function schemaFilePatterns(): Map<Dir, RegExp> {
  const schema: unknown = JSON.parse(readFileSync(new URL('../schema/desired-state.schema.json', import.meta.url), 'utf8'));
  const out = new Map<Dir, RegExp>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    const file = (node as { properties?: { file?: { pattern?: string } } }).properties?.file?.pattern;
    if (file !== undefined) {
      const dir = (['/etc/sysctl.d', '/etc/modules-load.d'] as const).find((d) => file.startsWith(`^${d.replace('.', '\\.')}/`));
      if (dir) out.set(dir, new RegExp(file));
    }
    Object.values(node).forEach(walk);
  };
  walk(schema);
  return out;
}

const patterns = schemaFilePatterns();

// Characters outside the reference's set, each with what it would do.
const FORBIDDEN: Array<[string, string]> = [
  [' ', 'a blank splits the plan line'],
  ['\t', 'a tab'],
  ['\n', 'a newline forges a second plan line'],
  ['\r', 'a carriage return'],
  ['*', 'a glob character'],
  ['?', 'a glob character'],
  ['[', 'a glob character'],
  ['~', 'a tilde'],
  [':', 'a colon'],
  ['$', 'a shell character'],
  ['\\', 'a backslash'],
  ['"', 'a quote'],
  ['\u00e4', 'a non-ASCII byte'],
];

describe('owned file names against the published schema', () => {
  it('the schema names a pattern for both directories', () => {
    expect([...patterns.keys()].sort()).toEqual(['/etc/modules-load.d', '/etc/sysctl.d']);
  });

  for (const dir of ['/etc/sysctl.d', '/etc/modules-load.d'] as const) {
    it(`${dir}: a forbidden character anywhere in a long NAME is refused, as the schema refuses it`, () => {
      const pattern = patterns.get(dir)!;
      const stem = '99-kubernetes-cri';
      for (const [ch, what] of FORBIDDEN) {
        for (let at = 1; at <= stem.length; at++) {
          const file = `${dir}/${stem.slice(0, at)}${ch}${stem.slice(at)}.conf`;
          // The oracle first: the published pattern refuses it.
          expect(pattern.test(file), `${what} at ${at}: ${JSON.stringify(file)}`).toBe(false);
          expect(ownedFileProblem(file, dir, 'its reader'), `${what} at ${at}: ${JSON.stringify(file)}`).toBe(
            `must be a file ${dir}/NAME.conf, NAME of letters, digits and _ . @ + -`,
          );
        }
      }
    });

    it(`${dir}: long names of the allowed characters are accepted, as the schema accepts them`, () => {
      const pattern = patterns.get(dir)!;
      for (const name of ['99-kubernetes-cri', 'k8s_v1.28+cilium@node-a', '00000000000000000000', 'kubespray.conf.d-x']) {
        const file = `${dir}/${name}.conf`;
        expect(pattern.test(file), file).toBe(true);
        expect(ownedFileProblem(file, dir, 'its reader'), file).toBeNull();
      }
    });
  }
});
