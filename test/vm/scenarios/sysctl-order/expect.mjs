// The sysctl ordering engine against a booted Debian 12 (issue 4): the planted
// fixtures (plant.sh) are applied by systemd-sysctl at boot and by
// `sysctl --system` on request; the engine's verdicts from `--plan --json`
// must match the kernel under both, before apply and after apply + reboot.
import { eq, need, exitOf, bootsOf } from '../../lib/checks.mjs';

const BASE = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

// Per fixture key: the rule it exercises and what the kernel shows after the
// planted boot (`boot`) and after `sysctl --system` (`system`).
const FIXTURES = {
  'net.ipv4.tcp_fin_timeout': { rule: 'a later /etc file', boot: '41', system: '41' },
  'net.ipv4.tcp_keepalive_probes': { rule: 'a vendor /usr/lib file sorting later', boot: '7', system: '7' },
  'net.ipv4.tcp_keepalive_intvl': { rule: 'a same-name /etc override of a vendor file', boot: '44', system: '44' },
  'net.ipv4.tcp_retries1': { rule: 'an /etc -> /dev/null mask of a vendor file', boot: '5', system: '5' },
  'net.ipv4.conf.all.rp_filter': { rule: 'a glob', boot: '2', system: '2' },
  'net.ipv4.conf.lo.rp_filter': { rule: 'an explicit key before a glob', boot: '0', system: '0' },
  'net.ipv4.tcp_keepalive_time': { rule: '/etc/sysctl.conf: loses at boot, last under sysctl --system', boot: '900', system: '600' },
  'net.ipv4.tcp_retries2': { rule: 'a "-" prefixed key', boot: '9', system: '9' },
  'net.ipv4.tcp_syn_retries': { rule: '";" and "#" comments', boot: '4', system: '4' },
  'net.ipv4.tcp_synack_retries': { rule: 'a key written with slashes', boot: '3', system: '3' },
};
const KEYS = Object.keys(FIXTURES);

// What the desired state asks for: different from every planted value, so the
// apply has conflicts to resolve (zz-late.conf, /etc/sysctl.conf).
const WANTED = {
  'net.ipv4.tcp_fin_timeout': 45,
  'net.ipv4.tcp_keepalive_probes': 8,
  'net.ipv4.tcp_keepalive_intvl': 50,
  'net.ipv4.tcp_retries1': 4,
  'net.ipv4.conf.all.rp_filter': 1,
  'net.ipv4.conf.lo.rp_filter': 0,
  'net.ipv4.tcp_keepalive_time': 1200,
  'net.ipv4.tcp_retries2': 12,
  'net.ipv4.tcp_syn_retries': 5,
  'net.ipv4.tcp_synack_retries': 4,
};

export const guest = {
  wait_ports: [],
  units: [],
  sysctl_keys: KEYS,
  ansible: false,
  verdicts: true,
};

export function desired(doc) {
  for (const r of doc.resources) {
    if (r.type === 'SysctlFile') r.settings = { ...r.settings, ...WANTED };
  }
  return doc;
}

function sysctlObserved(doc) {
  let found;
  const walk = (v) => {
    if (found) return;
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      if (v.type === 'SysctlFile' && v.observed) found = v.observed;
      else Object.values(v).forEach(walk);
    }
  };
  walk(doc);
  return need(found, 'SysctlFile observed in --plan --json');
}

const norm = (v) => (v === null || v === undefined ? v : String(v).trim().replace(/\s+/g, ' '));

// One check per key and model: the engine's verdict equals the live value.
function verdictChecks(label, planOf, liveOf, keys) {
  const out = [];
  for (const model of ['boot', 'system']) {
    for (const key of keys) {
      out.push({
        name: `${label}: ${model} verdict = kernel for ${key}`,
        needs: [4],
        check: () => {
          const v = need(sysctlObserved(planOf()).verdicts[model].find((x) => x.key === key), `${model} verdict for ${key}`);
          if (v.value === null) return `engine gives no value (via ${v.via}); the fixture should set one`;
          const live = liveOf(model)[key];
          return norm(v.value) === norm(live)
            ? { ok: true, detail: `${live} from ${v.winner} (${v.via})` }
            : `engine ${v.value} from ${v.winner} (${v.via}), kernel ${live}`;
        },
      });
    }
  }
  return out;
}

export function checks(r) {
  const { b1, b2 } = bootsOf(r);
  const json = (boot, name) => JSON.parse(need(boot.stdout(name), `${name} output`));
  const atBoot1 = () => need(b1().measure?.snapshot?.sysctls, 'first-boot sysctls');
  const afterSystem1 = () => need(b1().sysctlsBeforeApplyAfterSystem, 'sysctls after sysctl --system before apply');
  return [
    // The fixtures do what plant.sh says, independent of the engine.
    ...['boot', 'system'].map((model) => ({
      name: `planted: ${model === 'boot' ? 'first boot' : 'sysctl --system before apply'} shows the fixture values`,
      check: () => eq(KEYS.map((k) => (model === 'boot' ? atBoot1() : afterSystem1())[k]), KEYS.map((k) => FIXTURES[k][model]), model),
    })),

    ...verdictChecks('before apply', () => json(b1(), 'plan0json'), (m) => (m === 'boot' ? atBoot1() : afterSystem1()), KEYS),

    { name: 'plan before apply exits 2', needs: [2, 4], check: () => eq(exitOf(b1(), 'plan1'), 2) },
    { name: 'apply exits 0', needs: [2, 4], check: () => eq(exitOf(b1(), 'apply1'), 0) },
    { name: 'plan after apply exits 0', needs: [2, 4], check: () => eq(exitOf(b1(), 'plan2'), 0) },
    { name: 'plan after reboot exits 0', needs: [2, 4], check: () => eq(exitOf(b2(), 'plan3'), 0) },
    { name: 'after reboot: every wanted key has its value', needs: [4], check: () => eq(KEYS.map((k) => need(b2().snapshot, 'boot2 snapshot').sysctls[k]), KEYS.map((k) => String(WANTED[k]))) },
    { name: 'after reboot and sysctl --system: every wanted key has its value', needs: [4], check: () => eq(KEYS.map((k) => need(b2().sysctlsAfterSystem, 'boot2 sysctl --system')[k]), KEYS.map((k) => String(WANTED[k]))) },

    ...verdictChecks('after reboot', () => json(b2(), 'plan3json'), (m) => (m === 'boot' ? need(b2().snapshot, 'boot2 snapshot').sysctls : need(b2().sysctlsAfterSystem, 'boot2 sysctl --system')), [...BASE, ...KEYS]),
  ];
}
