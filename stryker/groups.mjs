// The module groups of `npm run test:mutation`: what each mutates and the
// test files that exercise it. A group runs only its own tests (through its
// vitest config in stryker/vitest/), so a mutant costs seconds, not the suite.
// Tests that spawn dist/reconcile.mjs are left out on purpose: the bundle in
// Stryker's sandbox is not built from the mutated source, so they can never
// kill a mutant and only cost time.
export const groups = {
  'sysctl-order': {
    mutate: ['src/sysctl/order.ts'],
    // sysctl-file.test.ts: the SysctlFile provider, the engine's real caller (owned-file problems, the tree after our writes).
    tests: ['test/sysctl-order.test.ts', 'test/sysctl-netns.test.ts', 'test/sysctl-file.test.ts', 'test/sysctl-order-domain.test.ts'],
  },
  fstab: {
    mutate: ['src/swap/fstab.ts'],
    tests: ['test/fstab.test.ts', 'test/fstab-oracle.test.ts', 'test/fstab-domain.test.ts', 'test/fstab-range-domain.test.ts'],
  },
  'modprobe-d': {
    mutate: ['src/modprobe/modprobe-d.ts'],
    tests: ['test/modprobe-d.test.ts', 'test/modprobe-oracle.test.ts', 'test/modprobe-d-domain.test.ts', 'test/modprobe-softdep-domain.test.ts'],
  },
  kubespray: {
    mutate: ['src/kubespray/who-fixes.ts', 'src/kubespray/tasks.ts'],
    tests: ['test/kubespray-who-fixes.test.ts', 'test/kubespray-forms.test.ts', 'test/kubespray-who-fixes-domain.test.ts'],
  },
  systemd: {
    mutate: ['src/systemd/**/*.ts'],
    // observeSysctlTree and the ModulesLoad provider read entries through it.
    tests: ['test/systemd-domain.test.ts', 'test/sysctl-order.test.ts', 'test/modules-load.test.ts'],
  },
  // Only validate.ts itself: the ajv validator it imports is generated from the schema at build time
  // (a virtual module, scripts/build/desired-state-validator.mjs), not code of ours to mutate.
  validate: {
    mutate: ['src/reconcile/validate.ts'],
    tests: ['test/desired-state.test.ts', 'test/desired-state-grammar.test.ts', 'test/desired-state-domain.test.ts', 'test/desired-state-messages-domain.test.ts'],
  },
  grammar: {
    mutate: ['src/reconcile/grammar.ts'],
    tests: ['test/desired-state.test.ts', 'test/desired-state-grammar.test.ts', 'test/desired-state-domain.test.ts', 'test/desired-state-messages-domain.test.ts', 'test/desired-state-files-domain.test.ts'],
  },
};
