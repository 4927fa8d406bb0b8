// The grammar of the desired state's shared values (grammar.ts): resource
// names, the file a resource owns in a drop-in directory (what
// systemd-sysctl and systemd-modules-load read), and the directories the
// reports must never land in. Each refusal is checked with its message.
// The owned file's whole-name contract is test/grammar.owned-files.test.ts.
import { describe, expect, it } from 'vitest';
import { nameProblem, ownedFileProblem, reportsDirProblem } from '../src/grammar.js';

describe('resource names', () => {
  it('a plain label of 1 to 63 characters', () => {
    expect(nameProblem('a'.repeat(63))).toBeNull();
    expect(nameProblem('k8s_v1.2-x')).toBeNull();
    const why = "must be a plain label: 1 to 63 of letters, digits, '_', '.' and '-'";
    for (const n of ['', 'a'.repeat(64), 'a b', 'a/b', 'ä']) expect(nameProblem(n), n).toBe(why);
  });
});

describe('owned files', () => {
  it('DIR/NAME.conf, not hidden, the name of plain characters', () => {
    expect(ownedFileProblem('/etc/sysctl.d/50-k8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBeNull();
    expect(ownedFileProblem('/etc/modules-load.d/k8s@a+b.conf', '/etc/modules-load.d', 'systemd-modules-load')).toBeNull();
    const want = 'must be a file /etc/sysctl.d/NAME.conf';
    for (const f of ['/etc/sysctl.d/sub/k8s.conf', '/etc/k8s.conf', '/etc/sysctl.d/k8s', '/etc/sysctl.d/.conf', '/etc/sysctl.d/k8s.conf.d']) {
      expect(ownedFileProblem(f, '/etc/sysctl.d', 'systemd-sysctl'), f).toBe(want);
    }
    expect(ownedFileProblem('/etc/sysctl.d/.k8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBe('names a hidden file, which systemd-sysctl never reads');
    expect(ownedFileProblem('/etc/modules-load.d/.k8s.conf', '/etc/modules-load.d', 'systemd-modules-load')).toBe(
      'names a hidden file, which systemd-modules-load never reads',
    );
    expect(ownedFileProblem('/etc/sysctl.d/k 8s.conf', '/etc/sysctl.d', 'systemd-sysctl')).toBe(`${want}, NAME of letters, digits and _ . @ + -`);
  });
});

describe('reports_dir', () => {
  it('an absolute path outside the system and kernel directories', () => {
    for (const d of ['/var/lib/k8s-reconcile', '/etc/k8s-reports', '/usr/local/var/r', '/procx', '/root/r/']) expect(reportsDirProblem(d), d).toBeNull();
    expect(reportsDirProblem('var/r')).toBe("must be an absolute path without '..'");
    expect(reportsDirProblem('/var/../etc')).toBe("must be an absolute path without '..'");
    expect(reportsDirProblem('/var/r\n')).toBe('must not contain control characters');
    for (const [d, n] of [
      ['/etc', '/etc'],
      ['/etc/', '/etc'],
      ['/usr//', '/usr'],
      ['/', '/'],
      ['//', '/'],
      ['/boot/.', '/boot'],
    ]) {
      expect(reportsDirProblem(d!), d).toBe(`must not be ${n}: the reports and the run journal would be written among the system's own files`);
    }
    expect(reportsDirProblem('/proc/self')).toBe('must not be under /proc, a kernel file system');
    expect(reportsDirProblem('/sys/fs/x')).toBe('must not be under /sys, a kernel file system');
    expect(reportsDirProblem('/dev/shm/r')).toBe('must not be under /dev, a kernel file system');
  });
});
