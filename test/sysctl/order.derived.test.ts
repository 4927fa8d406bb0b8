// A tree made by withFile, withEntry or withSysctlConf is read from its base's read order, sequence and
// key index (src/sysctl/order.ts, deriveReadOrder and derivedIndex). The
// oracle is the same questions asked of a copy of the tree that has no base,
// which order.ts reads from all its files (the path order.rules and
// order.namespace hold against systemd-sysctl and `sysctl --system`).
// Trees and the files written into them are generated: names shared across
// directories, hidden names, masks, /etc/sysctl.conf, paths outside sysctl.d,
// chains of one to three changes (withFile, withEntry, withSysctlConf).
import { describe, expect, it } from 'vitest';
import {
  applySequence,
  beatingAssignments,
  linesNaming,
  readOrder,
  SYSCTL_DIRS,
  SYSCTL_MODELS,
  verdict,
  withEntry,
  withFile,
  withSysctlConf,
  type SysctlConfFile,
  type SysctlTree,
} from '../../src/sysctl/order.js';
import { parseSysctlText } from '../../src/sysctl/parse.js';
import { pick, random } from '../helpers/random.js';

const KEYS = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.ipv4.conf.all.forwarding', 'vm.max_map_count', 'kernel.pid_max'];
const LINES = [
  'net.ipv4.ip_forward = 0',
  'net.ipv4.ip_forward = 1',
  'net.bridge.bridge-nf-call-iptables = 1',
  'net.bridge.bridge-nf-call-iptables = 0',
  'net.ipv4.conf.all.forwarding = 0',
  'net.ipv4.conf.*.forwarding = 1',
  'net/ipv4/conf/default/forwarding = 0',
  '-net.ipv4.ip_forward',
  '-net.ipv4.conf.*.forwarding',
  'vm.max_map_count = 262144',
  'kernel.pid_max = 4194304',
  '# a comment',
];
const NAMES = ['10-a.conf', '50-b.conf', '99-sysctl.conf', '.hidden.conf', 'zz.conf', 'k8s.conf', 'notes.txt'];
const DIRS = [...SYSCTL_DIRS, '/etc', '/etc/sysctl.d/sub'];

function text(r: () => number): string {
  return Array.from({ length: Math.floor(r() * 5) }, () => pick(r, LINES)).join('\n') + '\n';
}

function entry(r: () => number, p: string): SysctlConfFile {
  const masked = r() < 0.1;
  const content = masked ? '' : text(r);
  return { path: p, masked, realPath: p, content, assignments: parseSysctlText(content, p).assignments };
}

function tree(r: () => number): SysctlTree {
  const files = new Map<string, SysctlConfFile>();
  for (let n = Math.floor(r() * 12); n > 0; n--) {
    const p = `${pick(r, SYSCTL_DIRS)}/${pick(r, NAMES)}`;
    files.set(p, entry(r, p));
  }
  const conf = r() < 0.5 ? entry(r, '/etc/sysctl.conf') : null;
  return { files: [...files.values()], sysctlConf: conf && !conf.masked ? conf : null };
}

/** The same tree without its history: order.ts reads it from all its files. */
const fresh = (t: SysctlTree): SysctlTree => ({ files: [...t.files], sysctlConf: t.sysctlConf });

describe('a tree made by withFile, read from its base', () => {
  it('gives the read order, the sequence, every verdict and the lines beating ours that the whole tree gives', () => {
    const r = random(20261202);
    let compared = 0;
    for (let n = 0; n < 600; n++) {
      const base = tree(r);
      // Ask the base first (its order, sequence and index are what the derived trees start from), or not.
      if (r() < 0.7) for (const m of SYSCTL_MODELS) for (const k of KEYS) verdict(base, k, m);
      let t = base;
      for (let depth = 1 + Math.floor(r() * 3); depth > 0; depth--) {
        // withFile (our file, kubespray's), withEntry (an entry rewritten where it is: kubespray's edit through a link, a
        // mask among them), withSysctlConf (procps's trailing /etc/sysctl.conf changed, added or gone).
        const how = r();
        const p = how < 0.8 && t.files.length > 0 && how >= 0.5 ? pick(r, t.files).path : `${pick(r, DIRS)}/${pick(r, NAMES)}`;
        const content = text(r);
        if (how < 0.5) t = withFile(t, p, content, parseSysctlText(content, p).assignments);
        else if (how < 0.85) t = withEntry(t, entry(r, p));
        else t = withSysctlConf(t, r() < 0.2 ? null : entry(r, '/etc/sysctl.conf'));
        const whole = fresh(t);
        for (const m of SYSCTL_MODELS) {
          const label = `case ${n}, ${p}, ${m}`;
          expect(readOrder(t, m), label).toEqual(readOrder(whole, m));
          expect(applySequence(t, m), label).toEqual(applySequence(whole, m));
          for (const k of KEYS) {
            expect(verdict(t, k, m), `${label}, ${k}`).toEqual(verdict(whole, k, m));
            // The lines naming the key without a glob ("-key" lines too), as the whole sequence lists them.
            const naming = applySequence(whole, m).filter((ap) => ap.assignment.key === k && !ap.assignment.isGlob);
            expect(linesNaming(t, m, k), `${label}, ${k}`).toEqual(naming);
            expect(linesNaming(whole, m, k), `${label}, ${k}`).toEqual(naming);
            expect(beatingAssignments(t, p, k, '1', m), `${label}, ${k}`).toEqual(beatingAssignments(whole, p, k, '1', m));
          }
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });
});

describe('withEntry, withSysctlConf and what a written file joins', () => {
  const at = (p: string, content: string, masked = false): SysctlConfFile => ({
    path: p,
    masked,
    realPath: p,
    content,
    assignments: parseSysctlText(content, p).assignments,
  });
  const base: SysctlTree = {
    files: [
      at('/etc/sysctl.d/10-a.conf', 'net.ipv4.ip_forward = 0\n'),
      at('/usr/lib/sysctl.d/50-b.conf', 'net.ipv4.ip_forward = 1\n'),
      at('/etc/sysctl.d/99-z.conf', ''),
    ],
    sysctlConf: null,
  };

  it('withEntry puts the entry where the entry of its path was, and adds it last when there was none', () => {
    const e = at('/usr/lib/sysctl.d/50-b.conf', 'net.ipv4.ip_forward = 0\n');
    const t = withEntry(base, e);
    expect(t.files.map((f) => f.path)).toEqual(base.files.map((f) => f.path));
    expect(t.files[1]).toBe(e);
    const first = at('/etc/sysctl.d/10-a.conf', '');
    expect(withEntry(base, first).files).toEqual([first, base.files[1], base.files[2]]);
    expect(t.files.filter((f) => f !== e)).toEqual([base.files[0], base.files[2]]);
    const n = at('/run/sysctl.d/60-new.conf', 'net.ipv4.ip_forward = 1\n');
    expect(withEntry(base, n).files).toEqual([...base.files, n]);
    // 60-new.conf sorts after 50-b.conf and before 99-z.conf: both programs now end at its 1.
    for (const m of SYSCTL_MODELS) expect(verdict(withEntry(base, n), 'net.ipv4.ip_forward', m).value).toBe('1');
  });

  it('withSysctlConf gives procps a last file to read, which systemd-sysctl does not read', () => {
    const t = withSysctlConf(base, at('/etc/sysctl.conf', 'net.ipv4.ip_forward = 0\n'));
    expect(t.files).toBe(base.files);
    expect(verdict(t, 'net.ipv4.ip_forward', 'system').value).toBe('0');
    expect(verdict(t, 'net.ipv4.ip_forward', 'boot').value).toBe('1');
    expect(verdict(withSysctlConf(t, null), 'net.ipv4.ip_forward', 'system').value).toBe('1');
  });

  it('a file written outside the sysctl.d directories, or not named *.conf, is read by neither program (sysctl.d(5))', () => {
    for (const p of ['/etc/sysctl.d/zz-k8s.txt', '/etc/zz-k8s.conf', '/etc/sysctl.d/sub/zz-k8s.conf']) {
      const t = withFile(base, p, 'net.ipv4.ip_forward = 0\n', parseSysctlText('net.ipv4.ip_forward = 0\n', p).assignments);
      for (const m of SYSCTL_MODELS) {
        expect(
          readOrder(t, m).map((o) => o.file.path),
          `${p} ${m}`,
        ).not.toContain(p);
        expect(verdict(t, 'net.ipv4.ip_forward', m).value, `${p} ${m}`).toBe('1');
      }
    }
  });
});
