import { describe, expect, it } from 'vitest';
import {
  commentOutDirectives,
  effectiveConfFiles,
  findBlockers,
  isNoopInstallCommand,
  logicalLines,
  MODPROBE_MARKER,
  overrideContent,
  parseModprobeConf,
} from '../src/modprobe/modprobe-d.js';
import { dependenciesOf, parseModulesDep } from '../src/modprobe/modules-dep.js';

const WANT = ['overlay', 'br_netfilter'];

describe('parseModprobeConf', () => {
  it('finds blacklist and install lines, skipping comments', () => {
    const text = [
      '# blacklist br_netfilter',
      '  # blacklist overlay',
      'blacklist br_netfilter',
      'blacklist\tpcspkr',
      'install overlay /bin/true',
      'options br_netfilter foo=1',
      'alias br-nf br_netfilter',
    ].join('\n');
    expect(parseModprobeConf(text).map((d) => [d.kind, d.module, d.firstLine])).toEqual([
      ['blacklist', 'br_netfilter', 3],
      ['blacklist', 'pcspkr', 4],
      ['install', 'overlay', 5],
    ]);
  });

  it('treats "-" and "_" in module names alike', () => {
    expect(findBlockers('/f', 'blacklist br-netfilter\n', WANT).map((b) => b.module)).toEqual(['br_netfilter']);
  });

  it('counts only true/false install commands as blockers', () => {
    for (const cmd of ['/bin/true', '/bin/false', '/usr/bin/true', '/usr/bin/false', 'true', 'false', '/bin/true  ', '/bin/false # CIS 1.1.1', ':', '/bin/sh -c "exit 0"'])
      expect(isNoopInstallCommand(cmd), cmd).toBe(true);
    for (const cmd of ['/sbin/modprobe --ignore-install br_netfilter', '/bin/truex', '/opt/bin/true'])
      expect(isNoopInstallCommand(cmd), cmd).toBe(false);
    const text = 'install br_netfilter /sbin/modprobe --ignore-install br_netfilter && echo hi\ninstall overlay /usr/bin/false\n';
    expect(findBlockers('/f', text, WANT).map((b) => [b.kind, b.module])).toEqual([['install', 'overlay']]);
  });

  it('joins backslash continuations, and a continued comment stays a comment', () => {
    const text = 'install br_netfilter \\\n  /bin/true\n# note \\\nblacklist overlay\nblacklist \\\noverlay\n';
    expect(logicalLines(text).map((l) => [l.firstLine, l.lastLine])).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 7],
    ]);
    const blockers = findBlockers('/f', text, WANT);
    expect(blockers.map((b) => [b.kind, b.module, b.firstLine, b.lastLine])).toEqual([
      ['install', 'br_netfilter', 1, 2],
      ['blacklist', 'overlay', 5, 6],
    ]);
  });

  it("counts a dependency's no-op install line, not its blacklist", () => {
    const dep = parseModulesDep(
      'kernel/net/bridge/br_netfilter.ko.xz: kernel/net/bridge/bridge.ko.xz kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz\n' +
        'kernel/fs/overlayfs/overlay.ko.xz:\nkernel/net/bridge/bridge.ko.xz: kernel/net/802/stp.ko.xz kernel/net/llc/llc.ko.xz\n',
    );
    expect(dep.get('br_netfilter')).toEqual(['bridge', 'stp', 'llc']);
    expect(dep.get('overlay')).toEqual([]);
    const deps = dependenciesOf(WANT, [dep]);
    expect([...deps.entries()]).toEqual([
      ['bridge', ['br_netfilter']],
      ['stp', ['br_netfilter']],
      ['llc', ['br_netfilter']],
    ]);
    const text = 'install bridge /bin/false\nblacklist stp\ninstall llc /sbin/modprobe --ignore-install llc\n';
    expect(findBlockers('/f', text, WANT, deps).map((b) => [b.kind, b.module, b.neededBy])).toEqual([['install', 'bridge', ['br_netfilter']]]);
    expect(findBlockers('/f', text, WANT)).toEqual([]);
  });

  it('ignores blockers of modules nobody asked for', () => {
    expect(findBlockers('/f', 'blacklist nouveau\ninstall cramfs /bin/false\n', WANT)).toEqual([]);
  });
});

describe('commentOutDirectives', () => {
  it('comments the blocker lines only, keeping every other byte', () => {
    const text = '# hardening\nblacklist nouveau\nblacklist br_netfilter\ninstall cramfs /bin/false\ninstall overlay /bin/true';
    const out = commentOutDirectives(text, findBlockers('/f', text, WANT));
    expect(out).toBe(
      `# hardening\nblacklist nouveau\n${MODPROBE_MARKER}\n#blacklist br_netfilter\ninstall cramfs /bin/false\n${MODPROBE_MARKER}\n#install overlay /bin/true`,
    );
    expect(findBlockers('/f', out, WANT)).toEqual([]);
    // the unrelated blockers still parse as before
    expect(parseModprobeConf(out).map((d) => d.module)).toEqual(['nouveau', 'cramfs']);
  });

  it('comments every physical line of a continued directive', () => {
    const text = 'install br_netfilter \\\n  /bin/true\nblacklist pcspkr\n';
    const out = commentOutDirectives(text, findBlockers('/f', text, WANT));
    expect(out).toBe(`${MODPROBE_MARKER}\n#install br_netfilter \\\n#  /bin/true\nblacklist pcspkr\n`);
    expect(findBlockers('/f', out, WANT)).toEqual([]);
    expect(parseModprobeConf(out).map((d) => d.module)).toEqual(['pcspkr']);
  });

  it('override content names the vendor file and neutralises its blockers', () => {
    const text = 'blacklist br_netfilter\n';
    const out = overrideContent('/usr/lib/modprobe.d/sec.conf', text, findBlockers('/f', text, WANT));
    expect(out.split('\n')[0]).toContain('/usr/lib/modprobe.d/sec.conf');
    expect(findBlockers('/f', out, WANT)).toEqual([]);
  });
});

describe('effectiveConfFiles', () => {
  it('lets the first directory win for a name and sorts by name', () => {
    const listing = [
      { dir: '/etc/modprobe.d', names: ['local.conf', 'sec.conf', 'README', '.hidden.conf'] },
      { dir: '/run/modprobe.d', names: ['sec.conf', 'a.conf'] },
      { dir: '/usr/lib/modprobe.d', names: ['sec.conf', 'systemd.conf', 'old.alias'] },
      { dir: '/lib/modprobe.d', names: ['aliases.conf'] },
    ];
    const files = effectiveConfFiles(listing.flatMap(({ dir, names }) => names.map((name) => ({ dir, name }))));
    expect(files.map((f) => f.path)).toEqual([
      '/run/modprobe.d/a.conf',
      '/lib/modprobe.d/aliases.conf',
      '/etc/modprobe.d/local.conf',
      '/usr/lib/modprobe.d/old.alias',
      '/etc/modprobe.d/sec.conf',
      '/usr/lib/modprobe.d/systemd.conf',
    ]);
  });
});
