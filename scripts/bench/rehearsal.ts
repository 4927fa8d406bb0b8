// Cost of the boot rehearsal on this machine (docs/resources.md, "Boot rehearsal"):
// fixture trees under a temp dir, the real programs in private namespaces,
// N rounds each; prints the median wall time and the namespace runs. Needs
// root. Never touches this machine's sysctl files or values.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { sysctlFileProvider } from '../../src/resources/sysctl-file/provider.js';
import { rehearse, type SysctlEngine } from '../../src/resources/sysctl-file/rehearse.js';
import type { SysctlFileSpec } from '../../src/resources/sysctl-file/spec.js';

const rounds = Number(process.argv[2] ?? 5);
const work = mkdtempSync(path.join(os.tmpdir(), 'bench-rehearsal-'));
const live = new Host({ root: '/' });
const spec: SysctlFileSpec = {
  type: 'SysctlFile',
  file: '/etc/sysctl.d/k8s.conf',
  conflict_policy: 'resolve',
  settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1, 'kernel.pid_max': 4194304 },
};
const blind: SysctlEngine = {
  changes: (s, o) => sysctlFileProvider.diff(s, { ...o, rehearsal: null }, { live: false }).filter((c) => c.op.kind === 'owned'),
  verdict: (_t, key, model) => ({ key, model, value: '1', winner: null, via: 'explicit' }),
};
const cases: Array<{ name: string; files: Record<string, string>; engine?: SysctlEngine }> = [
  {
    name: 'engine and rehearsal agree',
    files: { '/usr/lib/sysctl.d/50-pid-max.conf': 'kernel.pid_max = 4194304\n', '/etc/sysctl.d/10-local.conf': 'net.ipv4.tcp_syncookies = 1\n' },
  },
  {
    name: 'bisection: one culprit among 5 net lines, both programs wrong',
    files: {
      '/usr/lib/sysctl.d/zz-vendor.conf':
        '# vendor\nnet.ipv4.conf.all.rp_filter = 2\nnet.ipv4.tcp_syncookies = 1\nnet.ipv4.ip_forward = 0\nnet.ipv4.conf.default.rp_filter = 2\n',
      '/etc/sysctl.d/10-local.conf': 'net.ipv4.tcp_fin_timeout = 30\n',
    },
    engine: blind,
  },
];
try {
  for (const c of cases) {
    const root = path.join(work, c.name.replace(/\W+/g, '-'));
    for (const [p, text] of Object.entries(c.files)) {
      mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      writeFileSync(path.join(root, p), text);
    }
    const observed = { ...(await sysctlFileProvider.observe(new Host({ root }), spec)), live: true };
    const times: number[] = [];
    let runs = 0;
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const r = await rehearse(live, spec, observed, c.engine);
      times.push(performance.now() - t0);
      if (r.status !== 'ran') throw new Error(r.reason);
      runs = r.runs;
    }
    times.sort((a, b) => a - b);
    console.log(
      `${c.name}: ${runs} namespace run${runs === 1 ? '' : 's'}, median ${Math.round(times[Math.floor(times.length / 2)]!)} ms (min ${Math.round(times[0]!)}, max ${Math.round(times[times.length - 1]!)}, ${rounds} rounds)`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
