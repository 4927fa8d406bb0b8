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
    tests: ['test/sysctl-order.test.ts', 'test/sysctl-netns.test.ts', 'test/sysctl-file.test.ts', 'test/sysctl-order-domain.test.ts',
      // Round three: the coupled-write pass of beatingAssignments against systemd-sysctl and sysctl --system.
      'test/sysctl-order-coupled-domain.test.ts'],
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
    // The -domain files are issue 19's: tasks-domain compares the walk with ansible-core's ModuleArgsParser.
    tests: [
      'test/kubespray-who-fixes.test.ts',
      'test/kubespray-forms.test.ts',
      'test/kubespray-who-fixes-domain.test.ts',
      'test/kubespray-who-fixes-verdicts-domain.test.ts',
      'test/kubespray-tasks-domain.test.ts',
      'test/kubespray-audit-forms-domain.test.ts',
      'test/kubespray-audit-edges-domain.test.ts',
      // Round five: forms that take a fixing module's arguments but fix nothing; sysctl values as ansible.posix writes them.
      'test/kubespray-classify-domain.test.ts',
      // Round six: the survivors of the 17:46 whole-file run; a registered result's stdout run as a command is unknown.
      'test/kubespray-survivors-domain.test.ts',
    ],
  },
  // unit-loader.ts is its own group (systemd-loader): #12a is merging the second unit loader into it, so its
  // figure is rerun on its own after that merge, and the two halves fit the time one run has.
  systemd: {
    mutate: ['src/systemd/**/*.ts', '!src/systemd/unit-loader.ts'],
    // conf-entry: observeSysctlTree and the ModulesLoad provider read entries through it. conf-dirs: the
    // sysctl and zram readers. unit-loader and boot-reach: systemd --test as the oracle (unit-graph-oracle),
    // PortFree's "what still starts it" (port-free-comeback, port-free-offline). unit-links: systemctl --root
    // disable/mask (unit-links), swap units. unit-file, systemctl-output: ports-parse, unit-dropin-order.
    // Left out: port-free-live and port-free-identity (real listeners, seconds per test; they reach
    // systemctl-show and systemctl-output only through ports/), and every test that spawns the bundle.
    tests: [
      'test/systemd-domain.test.ts', 'test/sysctl-order.test.ts', 'test/modules-load.test.ts',
      'test/conf-dirs.test.ts', 'test/unit-graph-oracle.test.ts', 'test/unit-links.test.ts', 'test/ports-parse.test.ts',
      'test/unit-dropin-order.test.ts', 'test/swap-units.test.ts', 'test/port-free-comeback.test.ts', 'test/port-free-offline.test.ts',
      // Round three: systemd-analyze timespan, systemctl --root is-enabled/enable/disable, systemd --test.
      'test/systemd-units-domain.test.ts', 'test/systemd-units-more-domain.test.ts',
      // Round four (19c): systemctl --root disable for unit-links.ts, systemd's cgroup rule for cgroup.ts.
      'test/unit-links-domain.test.ts', 'test/cgroup-domain.test.ts',
      // Round five: settings as systemd --test reads them (Accept=, Service=, ListenStream=, What=, Triggers=).
      'test/unit-settings-domain.test.ts',
      // The shared graph is the loader's graph, read once per Host.
      'test/system-graph.test.ts',
      // #19l: unit by unit against systemd --test.
      'test/unit-loader-domain.test.ts',
    ],
  },
  'systemd-loader': {
    mutate: ['src/systemd/unit-loader.ts'],
    // systemd --test as the oracle of the graph (unit-graph-oracle); PortFree's "what still starts it" and its
    // offline disable, which load the graph (port-free-comeback, port-free-offline, unit-links).
    tests: ['test/unit-graph-oracle.test.ts', 'test/port-free-comeback.test.ts', 'test/port-free-offline.test.ts', 'test/unit-links.test.ts', 'test/systemd-units-domain.test.ts', 'test/unit-settings-domain.test.ts',
      // #19l: unit by unit against systemd --test, [Install] against systemctl --root enable, the user path against systemd-analyze.
      'test/unit-loader-domain.test.ts'],
  },
  // Only validate.ts itself: the ajv validator it imports is generated from the schema at build time
  // (a virtual module, scripts/build/desired-state-validator.mjs), not code of ours to mutate.
  validate: {
    mutate: ['src/reconcile/validate.ts'],
    tests: ['test/desired-state.test.ts', 'test/desired-state-grammar.test.ts', 'test/desired-state-domain.test.ts', 'test/desired-state-messages-domain.test.ts'],
  },
  grammar: {
    mutate: ['src/grammar.ts'],
    tests: ['test/desired-state.test.ts', 'test/desired-state-grammar.test.ts', 'test/desired-state-domain.test.ts', 'test/desired-state-messages-domain.test.ts', 'test/desired-state-files-domain.test.ts'],
  },
};
