// The module groups of `npm run test:mutation`: what each mutates and the
// test files that exercise it. A group runs only its own tests (through its
// vitest config in stryker/vitest/), so a mutant costs seconds, not the suite.
// Tests that spawn dist/reconcile.mjs are left out on purpose: the bundle in
// Stryker's sandbox is not built from the mutated source, so they can never
// kill a mutant and only cost time. Test files are named by subject (test/ mirrors src/); where a
// group runs only some of a subject's tests, the others sit in a <subject>.<aspect>.test.ts file, so
// each group runs the same tests as when MUTATION.md's figures were measured.
export const groups = {
  'sysctl-order': {
    mutate: ['src/sysctl/order.ts'],
    // resources/sysctl-file/provider.test.ts: the SysctlFile provider, the engine's real caller (owned-file problems, the tree after our writes).
    // order.rules.test.ts holds the coupled-write pass of beatingAssignments against systemd-sysctl and sysctl --system.
    // order.load.test.ts: loadWrites (`sysctl -p A B`) against procps; the other tests of it run the bundle and cannot kill.
    tests: [
      'test/sysctl/order.test.ts',
      'test/sysctl/order.namespace.test.ts',
      'test/resources/sysctl-file/provider.test.ts',
      'test/sysctl/order.rules.test.ts',
      'test/sysctl/order.load.test.ts',
      // Trees one entry apart read from their base (withFile, withEntry, withSysctlConf), against the same trees read in full.
      'test/sysctl/order.derived.test.ts',
    ],
  },
  fstab: {
    mutate: ['src/swap/fstab.ts'],
    tests: ['test/swap/fstab.test.ts', 'test/swap/proc-swaps.test.ts'],
  },
  'modprobe-d': {
    mutate: ['src/modprobe/modprobe-d.ts'],
    tests: ['test/modprobe/modprobe-d.test.ts'],
  },
  kubespray: {
    mutate: ['src/kubespray/who-fixes.ts', 'src/kubespray/tasks.ts'],
    // tasks.test.ts compares the walk with ansible-core's ModuleArgsParser.
    tests: [
      'test/kubespray/who-fixes.fixture.test.ts',
      'test/kubespray/release-forms.test.ts',
      'test/kubespray/who-fixes.test.ts',
      'test/kubespray/who-fixes.verdicts.test.ts',
      'test/kubespray/tasks.test.ts',
      'test/kubespray/who-fixes.unevaluated.test.ts',
      // The code that came into who-fixes.ts and tasks.ts after da09bac's run (issue 28: tags, meta, check_mode,
      // set_fact and register, assert, command words) is tested here: the language classes against ansible-core's
      // own Python (language), the audit through the report (report, lazy-audit), include params (vars), command words.
      'test/kubespray/language.test.ts', 'test/ansible/yaml11.test.ts',
      'test/kubespray/report.test.ts',
      'test/kubespray/lazy-audit.test.ts',
      'test/kubespray/vars.test.ts',
      'test/kubespray/who-fixes-command-words.test.ts',
      // The walk against ansible-playbook, replayed from the answers it gave (test/fixtures/ansible-walk/records.json):
      // live, it takes about 4 minutes a run. The unit tier runs it live and fails when a kept answer went stale.
      'test/kubespray/tasks.walk.test.ts',
      // Where each inherited condition is written, and what ansible-core refuses as it loads a task.
      'test/kubespray/tasks.scope.test.ts',
      // What a failing assert leaves for the tasks after it.
      'test/kubespray/who-fixes.assert-ends-host.test.ts',
      // How an assert is judged and explained.
      'test/kubespray/who-fixes.asserts.test.ts',
      // Registers the caller answers (a stat it read on the host).
      'test/kubespray/who-fixes.registers.test.ts',
    ],
    env: { WALK_ORACLE: 'recorded' },
  },
  // unit-loader.ts is its own group (systemd-loader), so the two halves fit the time one run has.
  systemd: {
    mutate: ['src/systemd/**/*.ts', '!src/systemd/unit-loader.ts'],
    // conf-entry: observeSysctlTree and the ModulesLoad provider read entries through it. conf-dirs: the
    // sysctl and zram readers. unit-loader and boot-reach: systemd --test as the oracle (unit-graph),
    // PortFree's "what still starts it" (port-free/provider.comeback, port-free/diff-offline). unit-links: systemctl --root
    // disable/mask (unit-links.providers), swap units. unit-file, systemctl-output: their own tests, ports/parsers, unit-loader.drop-ins.
    // Left out: port-free/apply-live, port-free/diff-live and port-free/provider.identity (real listeners, seconds per test; they reach
    // systemctl-show and systemctl-output only through ports/), every test that spawns the bundle
    // (conf-entry.bundle), and system-graph.shared, which the measured figures did not include.
    tests: [
      'test/systemd/conf-entry.test.ts', 'test/sysctl/order.test.ts', 'test/resources/modules-load/provider.test.ts',
      'test/systemd/conf-dirs.test.ts', 'test/systemd/unit-graph.test.ts', 'test/systemd/unit-links.providers.test.ts', 'test/ports/parsers.test.ts',
      'test/systemd/unit-loader.drop-ins.test.ts', 'test/swap/units.test.ts', 'test/resources/port-free/provider.comeback.test.ts', 'test/resources/port-free/diff-offline.test.ts',
      // systemd-analyze timespan, systemctl --root is-enabled/enable/disable, systemd --test.
      'test/systemd/units.test.ts', 'test/systemd/systemctl-output.test.ts', 'test/systemd/systemctl-show.test.ts', 'test/systemd/boot-reach.test.ts',
      'test/systemd/unit-file.test.ts', 'test/systemd/unit-dirs.test.ts',
      // systemctl --root disable for unit-links.ts, systemd's cgroup rule for cgroup.ts.
      'test/systemd/unit-links.test.ts', 'test/systemd/cgroup.test.ts',
      // Settings as systemd --test reads them (Accept=, Service=, ListenStream=, What=, Triggers=).
      'test/systemd/unit-settings.test.ts',
      // The shared graph is the loader's graph, read once per Host.
      'test/systemd/system-graph.test.ts',
      // Unit by unit against systemd --test.
      'test/systemd/unit-loader.test.ts',
      // The files issue 29 moved into systemd/ brought their tests' subjects, not the tests: ExecStart= command
      // lines (exec-command.ts), SysV scripts seen by systemd-sysv-generator (sysv.ts), where a mask link goes
      // (unit-mask.ts, systemctl --root is the oracle).
      'test/ports/identity-grammars.test.ts',
      // ExecStart= values generated and read by systemd --test beside exec-command.ts.
      'test/systemd/exec-command.test.ts',
      // ListenStream= values generated and read by systemd --test beside socket-unit.ts; unitFilesOf on a loaded graph.
      'test/systemd/socket-unit.test.ts',
      'test/systemd/sysv.test.ts',
      'test/systemd/sysv.tree.test.ts',
      'test/systemd/unit-links-order.test.ts',
      'test/resources/port-free/provider.set-aside.test.ts',
      // The triggers of a unit against systemd's TriggeredBy= (the unit loader's Triggers edges).
      'test/ports/triggers.test.ts',
      // A unit as the running manager loaded it (manager-files.ts); its callers' tests boot a container.
      'test/systemd/manager-files.test.ts',
      'test/systemd/unit-mask.test.ts',
    ],
  },
  'systemd-loader': {
    mutate: ['src/systemd/unit-loader.ts'],
    // systemd --test as the oracle of the graph (unit-graph); PortFree's "what still starts it" and its
    // offline disable, which load the graph (port-free/provider.comeback, port-free/diff-offline, unit-links.providers).
    tests: ['test/systemd/unit-graph.test.ts', 'test/resources/port-free/provider.comeback.test.ts', 'test/resources/port-free/diff-offline.test.ts', 'test/systemd/unit-links.providers.test.ts', 'test/systemd/units.test.ts', 'test/systemd/unit-settings.test.ts',
      // Unit by unit against systemd --test, [Install] against systemctl --root enable; boot reachability over the loaded graph.
      'test/systemd/unit-loader.test.ts', 'test/systemd/boot-reach.test.ts'],
  },
  // Only validate.ts itself: the ajv validator it imports is generated from the schema at build time
  // (a virtual module, scripts/build/desired-state-validator.mjs), not code of ours to mutate.
  validate: {
    mutate: ['src/reconcile/validate.ts'],
    // reconcile/grammar.test.ts as measured is now it and the four files its describes moved to (one per grammar module, and host-checks).
    // reconcile/load.missing.test.ts stays out: it changes the working directory, which the runner's worker threads refuse.
    tests: ['test/reconcile/load.test.ts', 'test/reconcile/grammar.test.ts', 'test/reconcile/host-checks.test.ts', 'test/grammar.test.ts', 'test/resources/sysctl-file/grammar.test.ts', 'test/resources/modules-load/grammar.test.ts', 'test/reconcile/validate.test.ts'],
  },
  grammar: {
    mutate: ['src/grammar.ts', 'src/resources/sysctl-file/grammar.ts', 'src/resources/modules-load/grammar.ts'],
    tests: [
      'test/reconcile/load.test.ts',
      'test/reconcile/grammar.test.ts',
      'test/reconcile/host-checks.test.ts',
      'test/grammar.test.ts',
      'test/resources/sysctl-file/grammar.test.ts',
      'test/resources/modules-load/grammar.test.ts',
      'test/reconcile/validate.test.ts',
      'test/grammar.owned-files.test.ts',
    ],
  },
};
