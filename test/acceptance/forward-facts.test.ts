// readForward: the writers that set a dropping FORWARD at the next boot, read
// from fixture trees (`sh` sources ufw's two files as ufw-init does and prints
// the variables it then tests), and the live ruleset as the programs print it
// in a network namespace made here with rules.v4 and an nftables.conf loaded.
import { chmodSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Host, type CommandRunner } from '../../src/host.js';
import { readForward } from '../../src/acceptance/forward-facts.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { DEBIAN_NFTABLES_CONF, DROPPING_NFTABLES_CONF, RULES_V4, inNamespace, tmp } from '../helpers/rulesets.js';

const UNITS: Tree = {
  'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
  'lib/systemd/system/basic.target': '[Unit]\nDescription=Basic System\nRequires=sysinit.target\nAfter=sysinit.target\n',
  'lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User System\nRequires=basic.target\nAfter=basic.target\n',
  'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
};
/** A unit as Debian's package ships it (its [Install] line is what matters), enabled or not. */
const unit = (name: string, enabled: boolean): Tree => ({
  [`lib/systemd/system/${name}`]: `[Unit]\nDescription=${name}\n\n[Service]\nType=oneshot\nExecStart=/bin/true\n\n[Install]\nWantedBy=multi-user.target\n`,
  ...(enabled ? { [`etc/systemd/system/multi-user.target.wants/${name}`]: { link: `/lib/systemd/system/${name}` } } : {}),
});
// ufw 0.36.2's /etc/default/ufw (the lines ufw-init reads) and the ufw.conf its postinst writes.
const UFW_DEFAULTS =
  '# /etc/default/ufw\n#\n\n# Set to yes to apply rules to support IPv6\nIPV6=yes\n\nDEFAULT_INPUT_POLICY="DROP"\n\nDEFAULT_OUTPUT_POLICY="ACCEPT"\n\n# Set the default forward policy to ACCEPT, DROP or REJECT.\nDEFAULT_FORWARD_POLICY="DROP"\n\nDEFAULT_APPLICATION_POLICY="SKIP"\nMANAGE_BUILTINS=no\nIPT_SYSCTL=/etc/ufw/sysctl.conf\nIPT_MODULES=""\n';
const UFW_CONF = (enabled: string) => `# /etc/ufw/ufw.conf\n#\n\n# Set to yes to start on boot.\nENABLED=${enabled}\n\nLOGLEVEL=low\n`;

function host(tree: Tree, live = false, runner?: CommandRunner): Host {
  const root = tmp();
  buildTree(root, { ...UNITS, ...tree });
  for (const p of ['usr/sbin/xtables-nft-multi', 'usr/sbin/nft']) if (p in tree) chmodSync(path.join(root, p), 0o755);
  return new Host({ root, live, ...(runner ? { runner } : {}) });
}

/** What sh leaves of a variable after sourcing the files, as ufw-init does. */
function sourced(tree: Tree, name: string): string {
  const root = tmp();
  buildTree(root, tree);
  return execFileSync('sh', ['-c', `. "$1/etc/default/ufw"; . "$1/etc/ufw/ufw.conf"; printf %s "$${name}"`, 'sh', root], { encoding: 'utf8' });
}

describe('the writers at the next boot', () => {
  it('ufw enabled, ufw.service enabled: FORWARD DROP from ufw-init, naming both files and lines', async () => {
    const tree = { ...unit('ufw.service', true), 'etc/default/ufw': UFW_DEFAULTS, 'etc/ufw/ufw.conf': UFW_CONF('yes') };
    expect([sourced(tree, 'ENABLED'), sourced(tree, 'DEFAULT_FORWARD_POLICY')]).toEqual(['yes', 'DROP']);
    const f = await readForward(host(tree));
    expect(f).toMatchObject({ known: true, value: { now: 'offline', docker: null } });
    expect(f.known && f.value.atBoot).toEqual([
      {
        what: 'ufw',
        where: '/etc/ufw/ufw.conf:5 ENABLED=yes, /etc/default/ufw:12 DEFAULT_FORWARD_POLICY="DROP", /lib/systemd/system/ufw.service starts at boot',
      },
    ]);
  });

  it('ufw installed as Debian leaves it (ENABLED=no), or its unit disabled, or ACCEPT set: nothing', async () => {
    for (const tree of [
      { ...unit('ufw.service', true), 'etc/default/ufw': UFW_DEFAULTS, 'etc/ufw/ufw.conf': UFW_CONF('no') },
      { ...unit('ufw.service', false), 'etc/default/ufw': UFW_DEFAULTS, 'etc/ufw/ufw.conf': UFW_CONF('yes') },
      {
        ...unit('ufw.service', true),
        'etc/default/ufw': UFW_DEFAULTS.replace('FORWARD_POLICY="DROP"', 'FORWARD_POLICY="ACCEPT"'),
        'etc/ufw/ufw.conf': UFW_CONF('yes'),
      },
    ]) {
      expect(sourced(tree, 'ENABLED') === 'yes' && sourced(tree, 'DEFAULT_FORWARD_POLICY') !== 'ACCEPT' && 'ufw.service' in tree).toBe(false);
      expect(await readForward(host(tree))).toMatchObject({ known: true, value: { atBoot: [] } });
    }
  });

  it('a value ufw-init only knows at run time is unknown, naming the file and line', async () => {
    const tree = { ...unit('ufw.service', true), 'etc/default/ufw': UFW_DEFAULTS, 'etc/ufw/ufw.conf': `ENABLED=$(cat /etc/ufw/enabled)\n` };
    expect(await readForward(host(tree))).toMatchObject({ known: false, unreadable: true, reason: expect.stringContaining('/etc/ufw/ufw.conf:1') });
  });

  it('netfilter-persistent with rules.v4 saying :FORWARD DROP; nftables.service with a forward chain policy drop; docker.service', async () => {
    const f = await readForward(
      host({
        ...unit('netfilter-persistent.service', true),
        ...unit('nftables.service', true),
        ...unit('docker.service', true),
        'etc/iptables/rules.v4': RULES_V4('DROP'),
        'etc/nftables.conf': DROPPING_NFTABLES_CONF,
      }),
    );
    expect(f.known && f.value.atBoot).toEqual([
      { what: 'iptables-persistent', where: '/etc/iptables/rules.v4:4 :FORWARD DROP, /lib/systemd/system/netfilter-persistent.service starts at boot' },
      {
        what: 'nftables',
        where: '/etc/nftables.conf:14 table inet filter chain forward policy drop, /lib/systemd/system/nftables.service starts at boot',
        ownTable: true,
      },
    ]);
    expect(f.known && f.value.docker).toBe('/lib/systemd/system/docker.service');
  });

  it("Debian's stock nftables.conf with its unit enabled, and rules.v4 without its unit: nothing", async () => {
    const f = await readForward(
      host({ ...unit('nftables.service', true), 'etc/nftables.conf': DEBIAN_NFTABLES_CONF, 'etc/iptables/rules.v4': RULES_V4('DROP') }),
    );
    expect(f).toMatchObject({ known: true, value: { atBoot: [], docker: null } });
  });

  it('an nftables.conf the reader does not read is unknown with file:line', async () => {
    const f = await readForward(host({ ...unit('nftables.service', true), 'etc/nftables.conf': 'flush ruleset\ninclude "/etc/nftables.d/*"\n' }));
    expect(f).toMatchObject({ known: false, unreadable: true, reason: expect.stringContaining('/etc/nftables.conf:2') });
  });
});

describe('the live ruleset', () => {
  it('iptables-save and nft -j list ruleset as a namespace with rules.v4 and a dropping nftables.conf loaded prints them', async () => {
    const saved = inNamespace(RULES_V4('DROP'), 'iptables-restore < "$1" && iptables-save -t filter');
    const both = inNamespace(
      `${RULES_V4('DROP')}`,
      `iptables-restore < "$1" && nft -f - <<'EOF' && nft -j list ruleset\n${DROPPING_NFTABLES_CONF.replace('flush ruleset', '')}\nEOF`,
    );
    const runner: CommandRunner = async (cmd, args) => {
      // By the name PATH finds: xtables-nft-multi, which the link points at, dispatches on the name it is run by.
      const key = [cmd, ...args].join(' ');
      const out = key === '/usr/sbin/iptables-save -t filter' ? saved : key === '/usr/sbin/nft -j list ruleset' ? both : null;
      return { command: key, exitCode: out === null ? 127 : 0, stdout: out ?? '', stderr: '' };
    };
    const programs: Tree = {
      'usr/sbin/xtables-nft-multi': '#!/bin/sh\n',
      'usr/sbin/iptables-save': { link: 'xtables-nft-multi' },
      'usr/sbin/nft': '#!/bin/sh\n',
    };
    const f = await readForward(host(programs, true, runner));
    expect(f.known && f.value.now).toEqual({
      known: true,
      value: [
        { what: 'iptables (nf_tables)', where: '/usr/sbin/iptables-save -t filter, line 4: :FORWARD DROP' },
        // iptables-nft's own "ip filter FORWARD" is not counted twice; the inet table's chain is its own.
        { what: 'nftables', where: '/usr/sbin/nft -j list ruleset: table inet filter chain forward policy drop', ownTable: true },
      ],
    });
  });

  it("a dormant table's forward drop is not counted: the kernel's counter says which table is dormant", async () => {
    const t = (name: string, flags: string) =>
      `table ip ${name} {\n${flags}\n  chain out { type filter hook output priority 0; policy accept; counter; }\n` +
      '  chain forward { type filter hook forward priority 0; policy drop; }\n}\n';
    const [json, ...texts] = inNamespace(
      `${t('parked', '  flags dormant')}${t('live', '')}`,
      'ip link set lo up && nft -f "$1" && bash -c "echo x > /dev/udp/127.0.0.1/9" && nft -j list ruleset && ' +
        'for t in parked live; do echo ----; nft list table ip $t; done',
    ).split('----\n');
    // The oracle: the table whose output counter saw the packet is the live one.
    const items = (JSON.parse(json!) as { nftables: { rule?: { table: string; expr: { counter?: { packets: number } }[] } }[] }).nftables;
    const seen = items.filter((i) => i.rule?.expr.some((e) => (e.counter?.packets ?? 0) > 0)).map((i) => i.rule!.table);
    expect(seen).toEqual(['live']);
    const runner: CommandRunner = async (cmd, args) => {
      const key = [cmd, ...args].join(' ');
      const out =
        key === '/usr/sbin/nft -j list ruleset'
          ? json!
          : key === '/usr/sbin/nft list table ip parked'
            ? texts[0]!
            : key === '/usr/sbin/nft list table ip live'
              ? texts[1]!
              : null;
      return { command: key, exitCode: out === null ? 127 : 0, stdout: out ?? '', stderr: '' };
    };
    const f = await readForward(host({ 'usr/sbin/nft': '#!/bin/sh\n' }, true, runner));
    expect(f.known && f.value.now).toEqual({
      known: true,
      value: seen.map((name) => ({ what: 'nftables', where: `/usr/sbin/nft -j list ruleset: table ip ${name} chain forward policy drop`, ownTable: true })),
    });
  });

  it('no iptables-save and no nft on the host: no rules were set by a program, nothing now', async () => {
    expect(await readForward(host({}, true, async (c) => ({ command: c, exitCode: 127, stdout: '', stderr: '' })))).toMatchObject({
      known: true,
      value: { now: { known: true, value: [] } },
    });
  });
});
