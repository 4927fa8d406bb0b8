// ModulesLoad's value grammar (modules-load/grammar.ts): the kernel's
// module-name limit (MODULE_NAME_LEN 64 - sizeof(unsigned long) - 1 = 55),
// modprobe's option parsing of a leading '-', and kmod's reading of a '.'.
import { describe, expect, it } from 'vitest';
import { moduleNameProblem } from '../../../src/resources/modules-load/grammar.js';

describe('module names', () => {
  it('the kernel keeps 55 characters; modprobe reads a leading "-" as an option; kmod cuts at "."', () => {
    expect(moduleNameProblem('m'.repeat(55))).toBeNull();
    expect(moduleNameProblem('nf-conntrack')).toBeNull();
    expect(moduleNameProblem('m'.repeat(56))).toBe("is longer than 55 characters, the kernel's limit for a module name");
    expect(moduleNameProblem('-r')).toBe("must not begin with '-' (modprobe would read it as an option)");
    expect(moduleNameProblem('overlay.ko')).toBe("must be a module name (letters, digits, '_' and '-')");
    expect(moduleNameProblem('')).toBe("must be a module name (letters, digits, '_' and '-')");
  });
});
