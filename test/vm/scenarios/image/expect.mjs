// Golden image (issues 7 and 15): the lab's faults planted in a fresh tree,
// with the agent's ExecStart naming 10250, baked on this machine with
// `--apply --root` and the project's default desired-state.yaml (no
// disable_units). The bake cannot know whether the agent binds 10250, so it
// installs a first-boot unit and exits 0. Boot 1: after that unit, the host
// is converged, the agent stopped and disabled, the unit disabled and its
// reports present. Boot 2: still converged, and the unit did not run again.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

const AGENT = 'monitoring-agent.service';
const UNIT = 'k8s-host-reconcile-first-boot.service';
const UNRELATED = { 'vm.swappiness': '10', 'net.ipv4.conf.all.log_martians': '1' };
const SYSCTLS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

// Debian's own nodejs in each suite the scenario runs on.
const NODE_MAJOR = { bookworm: 18, trixie: 20 };

/** The scenario for one Debian suite (scenarios/image-trixie uses it too). */
export function imageScenario(suite) {
  const guest = {
    suite,
    flow: 'image-two-boot',
    // Boot 1 and 2 give the agent 15 s to bind 10250 again if it was not stopped.
    wait_ports: [10250],
    units: [AGENT],
    sysctl_keys: Object.keys(UNRELATED),
    ansible: false,
    // The bake copies the bundle into the image; the stage plans with that copy.
    ship_bundle: false,
  };
  return { guest, hostApply, checks: (r) => imageChecks(r, NODE_MAJOR[suite]) };
}

const bookworm = imageScenario('bookworm');
export const guest = bookworm.guest;

// No desired(): the repo's desired-state.yaml is baked as it is.

function hostApply({ root, desired: file, reconcile }) {
  const apply = reconcile(['--apply', '--root', root, '-f', file]);
  const plan = reconcile(['--plan', '--json', '--root', root, '-f', file]);
  return { apply, plan };
}

function converged(snap, when) {
  return [
    { name: `${when}: no swap (SwapTotal 0, /proc/swaps empty)`, needs: [2], check: () => eq({ total: snap().swap_total_kb, swaps: snap().proc_swaps }, { total: 0, swaps: [] }) },
    { name: `${when}: overlay and br_netfilter loaded`, needs: [2], check: () => eq([snap().modules.overlay.sys_module, snap().modules.br_netfilter.sys_module], [true, true], '[overlay, br_netfilter]') },
    { name: `${when}: three sysctls are 1`, needs: [4], check: () => eq(SYSCTLS.map((k) => snap().sysctls[k]), ['1', '1', '1'], SYSCTLS.join(',')) },
    { name: `${when}: unrelated planted keys kept`, needs: [4], check: () => eq(Object.keys(UNRELATED).map((k) => snap().sysctls[k]), Object.values(UNRELATED), Object.keys(UNRELATED).join(',')) },
    { name: `${when}: no control-plane port listening (10250 free)`, needs: [5], check: () => eq(snap().cp_ports_listening, []) },
    { name: `${when}: ${AGENT} stopped and disabled`, needs: [5], check: () => eq(snap().units[AGENT], { active: 'inactive', enabled: 'disabled' }) },
  ];
}

function imageChecks(r, nodeMajor) {
  const host = () => need(r.host, 'host-side --root results');
  const { b1, b2 } = bootsOf(r);
  const fb = (boot) => need(boot.firstBootUnit, 'first-boot-unit.json');
  const report = () => need(b1().preflight['first-boot'], 'preflight/first-boot.json');
  const bakePlan = () => JSON.parse(need(host().plan, 'host plan').stdout);
  const chain = (boot) => (boot.stdout('critical-chain') ?? '').trim();
  return [
    { name: 'bake: --apply --root with the default desired state exits 0', needs: [15], check: () => ({ ok: host().apply.exit === 0, detail: `exit ${host().apply.exit}${host().apply.exit === 0 ? '' : `\n${host().apply.stdout}\n${host().apply.stderr}`}` }) },
    { name: 'bake: the plan lists the agent as first-boot work, not operator action', needs: [15], check: () => {
      const out = host().apply.stdout;
      const line = out.split('\n').find((l) => l.includes(`at first boot: wait`) && l.includes(AGENT) && l.includes('10250'));
      return line && !out.includes('operator action required') ? { ok: true, detail: line.trim() } : `no first-boot line for ${AGENT}, or an operator line:\n${out}`;
    } },
    { name: 'bake: --plan --root afterwards exits 0; FirstBoot is in sync with one deferred line', needs: [15], check: () => {
      const fbRes = bakePlan().resources.find((x) => x.type === 'FirstBoot');
      return eq({ exit: host().plan.exit, changes: fbRes?.changes.map((c) => [c.id, c.deferred]) }, { exit: 0, changes: [['first-boot', true]] });
    } },
    { name: `boot 1: the guest runs Debian's own node ${nodeMajor}`, needs: [], check: () => {
      const v = (b1().stdout('node-version') ?? '').trim();
      return v.startsWith(`v${nodeMajor}.`) ? { ok: true, detail: v } : `node --version: ${v || '(none)'}`;
    } },
    { name: `boot 1: ${UNIT} ran and succeeded`, needs: [15], check: () => eq([fb(b1()).props.Result, fb(b1()).props.ExecMainStatus, fb(b1()).props.ActiveState], ['success', '0', 'active'], 'Result, ExecMainStatus, ActiveState') },
    { name: `boot 1: ${UNIT} disabled itself and wrote its stamp`, needs: [15], check: () => eq({ enabled: fb(b1()).is_enabled, wants: fb(b1()).wants_link, stamp: fb(b1()).stamp }, { enabled: 'disabled', wants: false, stamp: true }) },
    { name: 'boot 1: first-boot.json says converged, and the run waited until the agent listened', needs: [15], check: () => {
      const w = (report().waited ?? []).find((x) => x.unit === AGENT);
      return eq({ result: report().result, exit: report().exit, wait: w?.outcome, port: w?.port }, { result: 'converged', exit: 0, wait: 'listening', port: 10250 }, `first boot took ${report().seconds} s, waited ${w?.seconds} s for ${AGENT}`);
    } },
    { name: 'boot 1: before.json of the first boot saw the agent on 10250; ports.json names it', needs: [15], check: () => eq({
      busy: b1().preflight.before?.busy_ports, port: b1().preflight.ports?.port, unit: b1().preflight.ports?.unit,
    }, { busy: [10250], port: 10250, unit: AGENT }) },
    { name: `boot 1: the unit logged to the journal (stop and disable of ${AGENT})`, needs: [15], check: () => {
      const j = b1().firstBootJournal ?? '';
      return /systemctl stop monitoring-agent\.service/.test(j) && /first boot \(apply\): done/.test(j) ? true : `journal:\n${j.slice(-3000)}`;
    } },
    { name: `boot 1: systemd-analyze critical-chain ${UNIT}`, needs: [15], check: () => (chain(b1()).includes(UNIT) ? { ok: true, detail: `\n${chain(b1())}` } : `critical-chain output: ${chain(b1()) || '(none)'}\n${b1().stdout('analyze-time') ?? ''}`) },
    ...converged(() => need(b1().snapshot, 'boot 1 snapshot'), 'boot 1'),
    { name: 'boot 1: --plan inside exits 0', needs: [2, 4, 5], check: () => eq(exitOf(b1(), 'plan1'), 0) },
    ...converged(() => need(b2().snapshot, 'boot 2 snapshot'), 'boot 2'),
    { name: `boot 2: ${UNIT} did not run again (not started, no journal lines)`, needs: [15], check: () => {
      const p = fb(b2()).props;
      const lines = (b2().firstBootJournal ?? '').split('\n').filter((l) => l.trim() !== '' && !/^-- No entries --$/.test(l.trim()));
      return eq({ active: p.ActiveState, started: p.ExecMainStartTimestampMonotonic, enabled: fb(b2()).is_enabled, journal: lines }, { active: 'inactive', started: '0', enabled: 'disabled', journal: [] });
    } },
    { name: 'boot 2: --plan inside exits 0', needs: [2, 4, 5], check: () => eq(exitOf(b2(), 'plan3'), 0) },
  ];
}
export { hostApply };
export const checks = bookworm.checks;
