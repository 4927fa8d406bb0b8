// Loading a scenario's results and running its checks. A check names the
// issues that bring the behaviour it tests; when the bundle does not have it
// the check fails, naming those issues.
import fs from 'node:fs';
import path from 'node:path';

function readJson(p) {
  return fs.existsSync(p) ? JSON.parse(fs.readFileSync(p, 'utf8')) : undefined;
}

function loadBoot(dir) {
  if (!fs.existsSync(dir)) return undefined;
  const preflight = {};
  const pf = path.join(dir, 'preflight');
  if (fs.existsSync(pf)) {
    for (const f of fs.readdirSync(pf)) if (f.endsWith('.json')) preflight[f.replace(/\.json$/, '')] = readJson(path.join(pf, f));
  }
  const commands = Object.fromEntries((readJson(path.join(dir, 'commands.json')) ?? []).map((c) => [c.name, c]));
  const stdout = (name) => {
    const p = path.join(dir, `${name}.stdout`);
    return fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined;
  };
  return {
    dir,
    measure: readJson(path.join(dir, 'measure.json')),
    snapshot: readJson(path.join(dir, 'snapshot.json')),
    sysctlsAfterSystem: readJson(path.join(dir, 'sysctls-after-sysctl-system.json')),
    sysctlsBeforeApplyAfterSystem: readJson(path.join(dir, 'sysctls-before-apply-after-sysctl-system.json')),
    snapshotApplied: readJson(path.join(dir, 'snapshot-applied.json')),
    filesBefore: readJson(path.join(dir, 'files-before.json')),
    filesAfter: readJson(path.join(dir, 'files-after.json')),
    ansible: readJson(path.join(dir, 'ansible-setup.json')),
    firstBootUnit: readJson(path.join(dir, 'first-boot-unit.json')),
    guard: readJson(path.join(dir, 'guard.json')),
    firstBootJournal: fs.existsSync(path.join(dir, 'first-boot-journal.txt')) ? fs.readFileSync(path.join(dir, 'first-boot-journal.txt'), 'utf8') : undefined,
    preflight,
    commands,
    stdout,
  };
}

export function loadResults(resultsDir) {
  return { boot1: loadBoot(path.join(resultsDir, 'boot1')), boot2: loadBoot(path.join(resultsDir, 'boot2')) };
}

// Issues that bring each capability, and how `--providers` shows it landed.
export const ISSUES = {
  2: (p) => p.includes('SwapOff') && p.includes('ModulesLoad'),
  4: (p) => p.includes('SysctlFile'),
  5: (p) => p.includes('PortFree'),
  6: (p) => p.includes('facts'),
  10: (p) => p.includes('rollback'),
  15: (p) => p.includes('first-boot'),
  // Issue 17, boot-script half: the scan of rc.local, crontabs, if-*.d and unit command lines.
  '17b': (p) => p.includes('boot-scripts'),
  // Issue 48: the boot watch (apply --watch-next-boot, the plan's BootWatch findings).
  48: (p) => p.includes('boot-watch'),
};

// A check's function returns true, or a string/false describing the failure,
// or {ok, detail}. Throwing counts as a failure with the message. A check whose
// feature the bundle does not report (--providers) FAILS: the suite never
// passes by testing nothing.
export function runChecks(checks, landed, print) {
  const tally = { passed: 0, failed: 0, pending: 0 };
  for (const c of checks) {
    const missing = (c.needs ?? []).filter((i) => !ISSUES[i](landed));
    if (missing.length > 0) {
      tally.failed += 1;
      print(`FAIL ${c.name}: the bundle lacks what issue ${missing.map((i) => `#${i}`).join(', ')} brings (reconcile --providers: ${landed.join(', ') || 'nothing'})`);
      continue;
    }
    let ok;
    let detail;
    try {
      const r = c.check();
      if (r === true) ok = true;
      else if (r && typeof r === 'object') ({ ok, detail } = r);
      else { ok = false; detail = r === false ? undefined : r; }
    } catch (e) {
      ok = false;
      detail = `${e.message}`;
    }
    tally[ok ? 'passed' : 'failed'] += 1;
    print(`${ok ? 'PASS' : 'FAIL'} ${c.name}${detail ? `: ${detail}` : ''}`);
  }
  return tally;
}

// Helpers scenarios share.
export function eq(actual, expected, what = '') {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  return a === e ? { ok: true, detail: what ? `${what} = ${a}` : undefined } : { ok: false, detail: `${what ? `${what}: ` : ''}expected ${e}, got ${a}` };
}

export function need(value, what) {
  if (value === undefined || value === null) throw new Error(`${what} missing from the VM results`);
  return value;
}

/** facts.json against `ansible -m setup` run in the same VM: the fields kubespray judges the host by. */
export function factsEqualAnsible(f, a) {
  const addr = typeof f.default_ipv4 === 'object' && f.default_ipv4 !== null ? f.default_ipv4.address : f.default_ipv4;
  return eq(
    [f.memtotal_mb, f.processor_vcpus, f.distribution, f.distribution_version, f.kernel, addr],
    [a.ansible_memtotal_mb, a.ansible_processor_vcpus, a.ansible_distribution, a.ansible_distribution_version, a.ansible_kernel, a.ansible_default_ipv4?.address],
    '[memtotal_mb, processor_vcpus, distribution, distribution_version, kernel, default_ipv4]',
  );
}

/**
 * A scenario's results, each read when a check asks: boot 1, boot 2, boot 1's
 * measure.json, a command's output without colour, and the process planted on
 * a port as boot 1 measured it before anything ran.
 */
export function bootsOf(r) {
  const b1 = () => need(r.boot1, 'boot1 results');
  const b2 = () => need(r.boot2, 'boot2 results');
  const measured = () => need(b1().measure, 'boot1 measure.json');
  const text = (boot, name) => need(boot.stdout(name), `${name} output`).replace(/\x1b\[[0-9;]*m/g, '');
  const planted = (port) => need(holdersOn(measured().holders, port)[0], `holder of ${port} at first boot`);
  return { b1, b2, measured, text, planted };
}

/** The processes holding `port` in a listener list (measure.json's holders, a snapshot's listeners). */
export function holdersOn(listeners, port) {
  return listeners.filter((l) => l.port === port).flatMap((l) => l.holders);
}


export function exitOf(boot, name) {
  const c = need(need(boot, 'boot results').commands[name], `command ${name}`);
  return c.exit;
}

// Counts entries of every `changes` array in a --json document, wherever the
// CLI nests them (per resource or top level).
export function countChanges(doc) {
  let n = 0;
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'changes' && Array.isArray(x)) n += x.length;
        walk(x);
      }
    }
  };
  walk(doc);
  return n;
}

export const CP_PORTS = [2379, 2380, 6443, 10250, 10257, 10259];
