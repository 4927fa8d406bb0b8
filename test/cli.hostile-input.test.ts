// Hostile inputs through the CLI entry point: malformed or malicious desired
// states, host trees left by a previous admin, and bad command lines. Every
// case asserts the exit code, that the message names the file, line or key,
// that the root tree is unchanged (path, bytes, mode, owner, link targets)
// and that nothing was written beside it. Offline cases plan or apply against
// a fixture root; the few live cases only --plan, and fail before anything of
// this machine beyond /proc/sys and the owned files' links is read.
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { main } from '../src/cli.js';
import { captureIo } from './helpers/io.js';
import { buildTree, type Tree } from './helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'hostile-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const REPORTS = '/var/lib/k8s-reconcile';

/** A valid desired state, so each case changes one thing. */
const BASE = `reports_dir: ${REPORTS}
resources:
  - type: SwapOff
    remove_swap_files: false
  - type: ModulesLoad
    file: /etc/modules-load.d/k8s.conf
    modules: [overlay, br_netfilter]
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
`;

const BASE_TREE: Tree = {
  'etc/fstab': 'UUID=0a1b2c3d / ext4 errors=remount-ro 0 1\n',
  'etc/sysctl.d/README': 'x\n',
  'etc/modules-load.d/README': 'x\n',
  'etc/hostname': 'node1\n',
  'etc/passwd': 'root:x:0:0:root:/root:/bin/bash\n',
};

interface Case {
  name: string;
  /** Desired-state text (default BASE). */
  desired?: string | Buffer;
  tree?: Tree;
  /** Extra setup of the root after the tree is built. */
  setup?: (root: string) => void;
  /** CLI arguments before -f/--root (default --plan). */
  args?: string[];
  /** No -f given (CLI cases that test the file argument themselves). */
  noFile?: boolean;
  /** Run against this machine (no --root): --plan only. */
  live?: boolean;
  isRoot?: boolean;
  exit: number;
  /** Each must appear in stdout or stderr. A function gets the desired file's path. */
  names: Array<string | ((f: string) => string)>;
  /** None of these may appear. */
  absent?: string[];
}

/** "file:line:" of the first line of `text` containing `needle`: computed from the text, not by the tool. */
function at(text: string, needle: string): (f: string) => string {
  const i = text.indexOf(needle);
  if (i < 0) throw new Error(`fixture lost ${needle}`);
  const line = text.slice(0, i).split('\n').length;
  return (f) => `${f}:${line}:`;
}

function withSetting(key: string, value: string): string {
  return BASE.replace('      net.ipv4.ip_forward: 1\n', `      ${key}: ${value}\n`);
}

const cases: Case[] = [];

// ---- names ----
for (const [label, yaml] of [
  ['newline injection', JSON.stringify('x\nkernel.panic = 1\n')],
  ['64 characters', 'a'.repeat(64)],
  ['a space', '"my sysctl"'],
  ['a slash', 'a/b'],
  ['empty', '""'],
  ['non-ASCII', 'kübelet'],
  ['shell syntax', '"$(reboot)"'],
  ['a tab', '"a\\tb"'],
  ['a NUL', '"a\\0b"'],
  ['dot-dot path', '../x'],
  ['a number', '12'],
  ['a CR', '"a\\rb"'],
] as const) {
  const text = BASE.replace('  - type: SysctlFile\n', `  - type: SysctlFile\n    name: ${yaml}\n`);
  cases.push({ name: `name: ${label}`, desired: text, exit: 1, names: [at(text, '    name: '), 'resources[2].name'] });
}

// ---- sysctl keys ----
for (const key of [
  'kernel/../../../etc/hostname',
  '..',
  '.kernel.panic',
  '/kernel/panic',
  'kernel.',
  'kernel..panic',
  'net.ipv4.conf.//.forwarding',
  'net/ipv4/../x',
  'net/ipv4/./x',
  '-kernel.panic',
  '"kernel.pa nic"',
  '"kernel.pa*"',
  '"kernel.p?nic"',
  '"kernel.[ab]"',
  '"kernel.panic=1"',
  '"kernel#x"',
  '"kernel;x"',
  '"kernel\\\\x"',
  `"${'k'.repeat(256)}"`,
  '""',
  '"kernel.panic\\n"',
  '"kernel.pan\\u0000ic"',
  '"kernel.é"',
]) {
  const text = withSetting(key, '1');
  cases.push({ name: `sysctl key ${key.slice(0, 40)}`, desired: text, exit: 1, names: [at(text, `      ${key}:`), 'resources[2].settings'] });
}

// ---- sysctl values ----
for (const [label, value, msg] of [
  ['CR', '"1\\r"', 'control character'],
  ['NUL', '"1\\0"', 'control character'],
  ['newline injection', '"1\\nkernel.panic = 1"', 'control character'],
  ['tab', '"1\\t2"', 'control character'],
  ['DEL', '"1\\u007f"', 'control character'],
  ['ESC', '"\\e[31m1"', 'control character'],
  ['leading blank', '" 1"', 'blanks'],
  ['trailing blank', '"1 "', 'blanks'],
  ['comment #', '"1 # x"', "'#'"],
  ['comment ;', '"1;2"', "';'"],
  ['float 1e21', '1e21', 'floating-point'],
  ['float 1.5', '1.5', 'floating-point'],
  ['float 1.0', '1.0', 'floating-point'],
  ['infinity', '.inf', 'floating-point'],
  ['empty string', '""', 'empty'],
  ['a list', '[1]', 'must be an integer or a string'],
  ['a map', '{a: 1}', 'must be an integer or a string'],
  ['a boolean', 'true', 'must be an integer or a string'],
  ['null', 'null', 'must be an integer or a string'],
  ['5000 characters', `"${'9'.repeat(5000)}x"`, '4096'],
] as const) {
  const text = withSetting('kernel.shmmax', value);
  cases.push({ name: `sysctl value: ${label}`, desired: text, exit: 1, names: [at(text, 'kernel.shmmax'), 'resources[2].settings["kernel.shmmax"]', msg] });
}

// ---- module names ----
for (const [label, yaml] of [
  ['option -r', '"-r"'],
  ['option --all', '"--all"'],
  ['a space', '"br netfilter"'],
  ['a .ko suffix', 'overlay.ko'],
  ['a slash', 'a/b'],
  ['56 characters', 'm'.repeat(56)],
  ['empty', '""'],
  ['shell syntax', '"ovl;reboot"'],
  ['command substitution', '"$(reboot)"'],
  ['non-ASCII', 'överlay'],
  ['a newline', '"over\\nlay"'],
  ['a number', '7'],
] as const) {
  const text = BASE.replace('modules: [overlay, br_netfilter]', `modules:\n      - overlay\n      - ${yaml}`);
  cases.push({ name: `module name: ${label}`, desired: text, exit: 1, names: [at(text, `      - ${yaml}`), 'resources[1].modules[1]'] });
}
{
  const text = BASE.replace('modules: [overlay, br_netfilter]', 'modules:\n      - br_netfilter\n      - br-netfilter');
  cases.push({
    name: 'module names that kmod treats as one',
    desired: text,
    exit: 1,
    names: [at(text, '- br-netfilter'), 'resources[1].modules[1]', 'modules[0]'],
  });
}

// ---- owned files ----
for (const file of [
  '/etc/sysctl.d/.k8s.conf',
  '/etc/sysctl.d/k8s',
  '/etc/sysctl.d/../sysctl.conf',
  '/etc/sysctl.d/sub/k8s.conf',
  '/etc/sysctl.conf',
  '"/etc/sysctl.d/k 8s.conf"',
  '/etc/sysctl.d/.conf',
  '"/etc/sysctl.d/k8s.conf\\n"',
  '/tmp/k8s.conf',
  'k8s.conf',
]) {
  const text = BASE.replace('file: /etc/sysctl.d/k8s.conf', `file: ${file}`);
  cases.push({ name: `SysctlFile file ${file}`, desired: text, exit: 1, names: [at(text, `file: ${file}`), 'resources[2].file'] });
}
for (const file of [
  '/etc/modules-load.d/.k8s.conf',
  '/etc/modules-load.d/k8s.txt',
  '/etc/modules',
  '/etc/modules-load.d/../modules',
  '/usr/lib/modules-load.d/k8s.conf',
  '"/etc/modules-load.d/k8s\\u0000.conf"',
]) {
  const text = BASE.replace('file: /etc/modules-load.d/k8s.conf', `file: ${file}`);
  cases.push({ name: `ModulesLoad file ${file}`, desired: text, exit: 1, names: [at(text, `file: ${file}`), 'resources[1].file'] });
}

// ---- reports_dir ----
for (const dir of [
  '/',
  '/etc',
  '/etc/',
  '//etc',
  '/proc',
  '/proc/self',
  '/sys',
  '/sys/fs',
  '/dev',
  '/dev/shm',
  '/boot',
  '/usr',
  'relative/dir',
  '/a/../etc',
  '"/r\\u0000"',
  '""',
  '"/var/\\nx"',
]) {
  const text = BASE.replace(`reports_dir: ${REPORTS}`, `reports_dir: ${dir}`);
  cases.push({ name: `reports_dir ${dir}`, desired: text, exit: 1, names: [at(text, 'reports_dir:'), 'reports_dir'] });
}

// ---- the same file or key twice ----
{
  const text = BASE + '  - type: SysctlFile\n    name: second\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      kernel.panic: 1\n';
  cases.push({
    name: 'two SysctlFile resources, one file',
    desired: text,
    exit: 1,
    names: [
      at(text, '    file: /etc/sysctl.d/k8s.conf\n    settings:\n      kernel.panic'),
      'resources[3].file',
      'resources[2].file',
      at(text, 'file: /etc/sysctl.d/k8s.conf'),
    ],
  });
}
{
  const text = BASE + '  - type: SysctlFile\n    name: second\n    file: /etc/sysctl.d/k9s.conf\n    settings:\n      net/ipv4/ip_forward: 0\n';
  cases.push({
    name: 'two resources, one key in two spellings',
    desired: text,
    exit: 1,
    names: [at(text, 'net/ipv4/ip_forward'), 'net.ipv4.ip_forward', 'resources[2].settings'],
  });
}
{
  const text = withSetting('net.ipv4.ip_forward', '1\n      net/ipv4/ip_forward: 0');
  cases.push({ name: 'one resource, one key in two spellings', desired: text, exit: 1, names: [at(text, 'net/ipv4/ip_forward'), 'sets net.ipv4.ip_forward'] });
}
{
  const text = BASE + '  - type: ModulesLoad\n    name: other\n    modules: [nf_conntrack]\n';
  cases.push({
    name: 'two ModulesLoad resources, one (default) file',
    desired: text,
    exit: 1,
    names: [at(text, '  - type: ModulesLoad\n    name: other'), 'resources[3]', '/etc/modules-load.d/k8s.conf'],
  });
}
{
  const text = BASE + '  - type: SwapOff\n';
  cases.push({ name: 'SwapOff twice', desired: text, exit: 1, names: ['resources[3]', 'duplicates resources[0]'] });
}

// ---- limits and YAML ----
{
  const big = BASE + '# ' + 'x'.repeat(1024 * 1024) + '\n';
  cases.push({ name: 'a document over 1 MiB', desired: big, exit: 1, names: [(f) => `${f}:1:1`, '1 MiB'] });
  const bomb = [
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
    ...Array.from(
      { length: 8 },
      (_, i) =>
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
    ),
    'reports_dir: /r',
    'resources: []',
    '',
  ].join('\n');
  cases.push({
    name: 'a YAML alias bomb',
    desired: bomb,
    exit: 1,
    names: [(f) => `${f}:`, 'aliases'],
    absent: ['ReferenceError', 'internal error', '    at '],
  });
  const aliasesOk = 'reports_dir: &d /var/lib/r\nresources:\n  - type: SwapOff\n    name: *d\n';
  cases.push({ name: 'an alias used where a plain label belongs', desired: aliasesOk, exit: 1, names: [at(aliasesOk, 'name:'), 'resources[0].name'] });
}
for (const [label, text, needle] of [
  ['YAML syntax error', 'reports_dir: /r\nresources: [\n', null],
  ['duplicate key', `reports_dir: /a\nreports_dir: /b\nresources: []\n`, 'reports_dir: /b'],
  ['two documents', `${BASE}---\n${BASE}`, null],
  ['a top-level list', '- a\n- b\n', null],
  ['a top-level scalar', 'hello\n', null],
  ['an unknown tag', `reports_dir: !!binary aGk=\nresources: []\n`, 'reports_dir'],
  ['a custom tag', `reports_dir: !js/function "x"\nresources: []\n`, 'reports_dir'],
  ['tabs for indentation', 'reports_dir: /r\nresources:\n\t- type: SwapOff\n', null],
  ['an empty file', '', null],
  ['only a comment', '# nothing\n', null],
  ['unknown top-level key', BASE + 'colour: red\n', 'colour'],
  ['unknown resource type', BASE.replace('type: SwapOff', 'type: RebootNow'), 'RebootNow'],
  ['a merge key', `reports_dir: /r\nresources:\n  - <<: {type: SwapOff}\n`, null],
] as const) {
  cases.push({
    name: `YAML: ${label}`,
    desired: text,
    exit: 1,
    names: [needle ? at(text, needle) : (f: string) => `${f}:`],
    absent: ['internal error', '    at '],
  });
}
cases.push({
  name: 'YAML: bytes that are not UTF-8',
  desired: Buffer.concat([Buffer.from('reports_dir: /r\xff\xfe\n', 'latin1'), Buffer.from('resources: [')]),
  exit: 1,
  names: [(f) => `${f}:`],
  absent: ['internal error'],
});
cases.push({
  name: 'YAML: NUL bytes',
  desired: Buffer.from('reports_dir: /r\0\nresources: []\n', 'latin1'),
  exit: 1,
  names: [(f) => `${f}:`],
  absent: ['internal error'],
});

// ---- other keys ----
for (const [label, from, to, key] of [
  ['port 0', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [0]\n', 'resources[0].ports[0]'],
  ['port 65536', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [65536]\n', 'resources[0].ports[0]'],
  ['port -1', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [-1]\n', 'resources[0].ports[0]'],
  ['port as a string', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: ["6443"]\n', 'resources[0].ports[0]'],
  ['port 1.5', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [1.5]\n', 'resources[0].ports[0]'],
  ['port beyond 2^64', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [18446744073709551617]\n', 'resources[0].ports[0]'],
  ['port twice', 'resources:\n', 'resources:\n  - type: PortFree\n    ports: [6443, 6443]\n', 'resources[0].ports'],
  ['timeout 0', 'resources:\n', 'resources:\n  - type: PortFree\n    timeout_seconds: 0\n', 'resources[0].timeout_seconds'],
  ['timeout 3601', 'resources:\n', 'resources:\n  - type: PortFree\n    timeout_seconds: 3601\n', 'resources[0].timeout_seconds'],
  ['protected unit with a slash', 'resources:\n', 'resources:\n  - type: PortFree\n    protected_units: [a/b.service]\n', 'resources[0].protected_units[0]'],
  ['protected unit with a newline', 'resources:\n', 'resources:\n  - type: PortFree\n    protected_units: ["a\\nb"]\n', 'resources[0].protected_units[0]'],
  ['disable unit that is a timer', 'resources:\n', 'resources:\n  - type: PortFree\n    disable_units: [x.timer]\n', 'resources[0].disable_units[0]'],
  ['disable unit with ..', 'resources:\n', 'resources:\n  - type: PortFree\n    disable_units: [../x.service]\n', 'resources[0].disable_units[0]'],
  ['disable unit with a NUL', 'resources:\n', 'resources:\n  - type: PortFree\n    disable_units: ["x\\0.service"]\n', 'resources[0].disable_units[0]'],
  ['kubespray dir relative', 'resources:\n', 'kubespray:\n  dir: ks\n  inventory: /i.ini\n  node: n\nresources:\n', 'kubespray.dir'],
  ['kubespray inventory with ..', 'resources:\n', 'kubespray:\n  dir: /ks\n  inventory: /a/../../i.ini\n  node: n\nresources:\n', 'kubespray.inventory'],
  ['kubespray node with a space', 'resources:\n', 'kubespray:\n  dir: /ks\n  inventory: /i.ini\n  node: "a b"\nresources:\n', 'kubespray.node'],
  ['facts source', 'resources:\n', 'facts:\n  source: ssh\nresources:\n', 'facts.source'],
  ['conflict policy', 'file: /etc/sysctl.d/k8s.conf\n', 'file: /etc/sysctl.d/k8s.conf\n    conflict_policy: ignore\n', 'resources[2].conflict_policy'],
  ['remove_swap_files as a string', 'remove_swap_files: false', 'remove_swap_files: "yes"', 'resources[0].remove_swap_files'],
  ['settings empty', '    settings:\n      net.ipv4.ip_forward: 1\n', '    settings: {}\n', 'resources[2].settings'],
  ['modules empty', 'modules: [overlay, br_netfilter]', 'modules: []', 'resources[1].modules'],
] as const) {
  const text = BASE.replace(from, to);
  cases.push({ name: `key: ${label}`, desired: text, exit: 1, names: [(f) => `${f}:`, key] });
}

// ---- exact integers reach the file (plan shows them; nothing written) ----
for (const [value, written] of [
  ['18446744073692774399', '18446744073692774399'],
  ['1000000000000000000000', '1000000000000000000000'],
  ['-9223372036854775808', '-9223372036854775808'],
  ['0x10', '16'],
  ['"18446744073692774399"', '18446744073692774399'],
] as const) {
  cases.push({
    name: `exact integer ${value}`,
    desired: withSetting('kernel.shmmax', value),
    exit: 2,
    names: [`kernel.shmmax = ${written}\n`],
    absent: ['e+', '18446744073692774000'],
  });
}

// ---- host trees ----
cases.push({
  name: "the owned sysctl file is procps's link 99-sysctl.conf -> ../sysctl.conf",
  desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'),
  tree: { 'etc/sysctl.conf': 'net.ipv4.ip_forward=1\n', 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } },
  exit: 1,
  names: [
    at(BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'), 'file: /etc/sysctl.d/99-sysctl.conf'),
    'resources[2].file',
    "procps's link",
    '/etc/sysctl.conf',
  ],
});
cases.push({
  name: "the owned modules file is kmod's link modules.conf -> ../modules",
  desired: BASE.replace('/etc/modules-load.d/k8s.conf', '/etc/modules-load.d/modules.conf'),
  tree: { 'etc/modules': 'loop\n', 'etc/modules-load.d/modules.conf': { link: '../modules' } },
  exit: 1,
  names: ['resources[1].file', "kmod's link", '/etc/modules'],
});
cases.push({
  name: 'the owned file is a link the dpkg database names',
  desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/50-vendor.conf'),
  tree: {
    'usr/lib/vendor/50.conf': 'kernel.x = 1\n',
    'etc/sysctl.d/50-vendor.conf': { link: '/usr/lib/vendor/50.conf' },
    'var/lib/dpkg/info/vendor-tune:amd64.list': '/.\n/etc\n/etc/sysctl.d\n/etc/sysctl.d/50-vendor.conf\n',
  },
  exit: 1,
  names: ['resources[2].file', "vendor-tune's link"],
});
{
  const d = BASE.replace('remove_swap_files: false', 'remove_swap_files: true');
  cases.push({
    name: 'fstab lists /etc/passwd as swap, remove_swap_files on',
    desired: d,
    tree: { 'etc/fstab': '/etc/passwd none swap sw 0 0\n' },
    exit: 2,
    names: ['/etc/fstab:1', '/etc/passwd', 'no swap signature'],
    absent: ['delete swap file /etc/passwd'],
  });
  cases.push({
    name: 'fstab lists /etc/passwd as swap, apply refuses to run it',
    desired: d,
    tree: { 'etc/fstab': '/etc/passwd none swap sw 0 0\n' },
    args: ['--plan', '--json'],
    exit: 2,
    names: ['remove-refused:/etc/passwd'],
    absent: ['"remove:/etc/passwd"'],
  });
  cases.push({
    name: 'fstab lists a directory as swap',
    desired: d,
    tree: { 'etc/fstab': '/etc none swap sw\n' },
    exit: 2,
    names: ['/etc/fstab:1', 'is a directory'],
  });
  cases.push({
    name: 'fstab lists a symlink to /etc/shadow as swap',
    desired: d,
    tree: { 'etc/shadow': 'root:*:1::::::\n', swapfile: { link: '/etc/shadow' }, 'etc/fstab': '/swapfile none swap sw\n' },
    exit: 2,
    names: ['/etc/fstab:1', 'symlink'],
  });
  cases.push({
    name: 'a .swap unit names /etc/hostname',
    desired: d,
    tree: {
      'etc/fstab': '',
      'etc/systemd/system/evil.swap': '[Swap]\nWhat=/etc/hostname\n[Install]\nWantedBy=swap.target\n',
      'etc/systemd/system/swap.target.wants/evil.swap': { link: '/etc/systemd/system/evil.swap' },
    },
    exit: 2,
    names: ['evil.swap', '/etc/hostname', 'no swap signature'],
  });
}
for (const [label, fstab, line] of [
  ['3-field swap line', '/dev/sdb3 none swap\n', 1],
  ['swap line with a trailing comment', 'UUID=9f8e none swap sw 0 0 # comment\n', 1],
  ['octal-escaped type', '/dev/sdc1 none s\\167ap sw\n', 1],
  ['CRLF fstab', 'UUID=x / ext4 defaults 0 1\r\n/swapfile none swap sw 0 0\r\n', 2],
  ['swap after a malformed line', 'proc /proc\n/dev/sdd1 none swap\n', 2],
] as const) {
  cases.push({ name: `fstab: ${label}`, tree: { 'etc/fstab': fstab }, exit: 2, names: [`comment out 1 swap line in /etc/fstab (line ${line}`] });
}
cases.push({
  name: 'fstab: swap,x is not swap',
  tree: { 'etc/fstab': '/dev/sde1 none swap,x sw\n' },
  exit: 2,
  names: ['mask swap.target'],
  absent: ['/etc/fstab (line'],
});
cases.push({
  name: 'fstab: a bad passno makes libmount ignore the line',
  tree: { 'etc/fstab': '/dev/sde1 none swap sw 0 x\n' },
  exit: 2,
  names: ['mask swap.target'],
  absent: ['/etc/fstab (line'],
});
for (const [label, file, text, needle] of [
  ['install br_netfilter /bin/sh -c "exit 0"', 'etc/modprobe.d/k.conf', 'install br_netfilter /bin/sh -c "exit 0"\n', '/etc/modprobe.d/k.conf'],
  ['install overlay :', 'etc/modprobe.d/k.conf', 'install overlay :\n', '/etc/modprobe.d/k.conf'],
  ['install overlay /bin/false in a vendor file', 'usr/lib/modprobe.d/v.conf', '# vendor\ninstall overlay /bin/false\n', '/usr/lib/modprobe.d/v.conf'],
  ['blacklist in an .alias file', 'etc/modprobe.d/x.alias', 'blacklist br_netfilter\n', '/etc/modprobe.d/x.alias'],
  ['install continued over two lines', 'etc/modprobe.d/k.conf', 'install overlay \\\n  /bin/true\n', 'lines 1-2'],
  ['a softdep whose install fails', 'etc/modprobe.d/k.conf', 'softdep br_netfilter pre: nf_x\ninstall nf_x /bin/false\n', 'nf_x'],
  ['install exit 1 then modprobe', 'etc/modprobe.d/k.conf', 'install overlay exit 1; /sbin/modprobe -i overlay\n', '/etc/modprobe.d/k.conf'],
] as const) {
  cases.push({ name: `modprobe.d: ${label}`, tree: { [file]: text }, exit: 2, names: [needle, 'line'] });
}
cases.push({
  name: 'modprobe.d: an install command of unknown effect is an operator decision',
  tree: { 'etc/modprobe.d/k.conf': 'install br_netfilter /usr/local/sbin/load-bridge\n' },
  exit: 2,
  names: ['/etc/modprobe.d/k.conf:1', 'unknown', 'cannot tell'],
});
cases.push({
  name: 'modprobe.d: an install that loads the module is left alone',
  tree: { 'etc/modprobe.d/k.conf': 'install br_netfilter /sbin/modprobe --ignore-install br_netfilter $CMDLINE_OPTS && echo ok\n' },
  exit: 2,
  names: ['modules-load.d/k8s.conf'],
  absent: ['/etc/modprobe.d/k.conf'],
});
cases.push({
  name: 'modprobe.d: a commented-out line stays out',
  tree: { 'etc/modprobe.d/k.conf': '# install overlay /bin/true \\\nblacklist overlay\n' },
  exit: 2,
  names: ['modules-load.d/k8s.conf'],
  absent: ['/etc/modprobe.d/k.conf'],
});
cases.push({
  name: 'modprobe.d: a CRLF blacklist names another module',
  tree: { 'etc/modprobe.d/k.conf': 'blacklist br_netfilter\r\n' },
  exit: 2,
  names: ['modules-load.d/k8s.conf'],
  absent: ['/etc/modprobe.d/k.conf'],
});

// ---- the command line ----
cases.push({ name: 'CLI: --plan and --apply together', args: ['--plan', '--apply'], exit: 1, names: ['give exactly one of --plan'] });
cases.push({ name: 'CLI: neither --plan nor --apply', args: [], exit: 1, names: ['give exactly one of --plan'] });
cases.push({ name: 'CLI: an unknown option', args: ['--plan', '--force'], exit: 1, names: ['--force'] });
cases.push({ name: 'CLI: a positional argument', args: ['--plan', 'extra'], exit: 1, names: ['extra'] });
cases.push({ name: 'CLI: -f without a value', args: ['--plan', '-f'], noFile: true, exit: 1, names: ['-f'] });
cases.push({
  name: 'CLI: -f names a missing file',
  args: ['--plan', '-f', path.join(work, 'nope.yaml')],
  noFile: true,
  exit: 1,
  names: [`${path.join(work, 'nope.yaml')}:1:1`, 'no such file', '-f FILE', '/etc/k8s-host-reconcile/desired-state.yaml'],
});
cases.push({ name: 'CLI: -f names a directory', args: ['--plan', '-f', work], noFile: true, exit: 1, names: [`${work}:1:1`, 'directory'] });
cases.push({ name: 'CLI: -f /dev/zero', args: ['--plan', '-f', '/dev/zero'], noFile: true, exit: 1, names: ['/dev/zero:1:1', 'not a regular file'] });
cases.push({ name: 'CLI: -f /dev/null', args: ['--plan', '-f', '/dev/null'], noFile: true, exit: 1, names: ['/dev/null:1:1'] });
cases.push({
  name: 'CLI: --apply on a bad desired state',
  args: ['--apply'],
  desired: withSetting('kernel.shmmax', '"1\\r"'),
  exit: 1,
  names: ['resources[2].settings["kernel.shmmax"]', 'nothing was changed'],
});
cases.push({
  name: 'CLI: --apply with a package link',
  args: ['--apply'],
  desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'),
  tree: { 'etc/sysctl.conf': 'x=1\n', 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } },
  exit: 1,
  names: ["procps's link", 'nothing was changed'],
});
cases.push({
  name: 'CLI: --apply --json with reports_dir /etc',
  args: ['--apply', '--json'],
  desired: BASE.replace(`reports_dir: ${REPORTS}`, 'reports_dir: /etc'),
  exit: 1,
  names: ['reports_dir'],
});
cases.push({
  name: 'CLI: --apply with a name that injects a line',
  args: ['--apply'],
  desired: BASE.replace('  - type: SysctlFile\n', `  - type: SysctlFile\n    name: ${JSON.stringify('k\nkernel.panic = 1')}\n`),
  exit: 1,
  names: ['resources[2].name'],
});
cases.push({
  name: 'CLI: --apply with an alias bomb',
  args: ['--apply'],
  desired: 'a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n',
  exit: 1,
  names: ['aliases'],
  absent: ['internal error'],
});

// ---- live, --plan only: fails at the desired-state check, before observing ----
cases.push({
  name: 'live: a key missing under /proc/sys',
  live: true,
  desired: withSetting('kernel.k8s_host_reconcile_no_such_key', '1'),
  exit: 1,
  names: ['resources[2].settings["kernel.k8s_host_reconcile_no_such_key"]', '/proc/sys/kernel/k8s_host_reconcile_no_such_key does not exist'],
});
cases.push({
  name: 'live: a key that is a directory of keys',
  live: true,
  desired: withSetting('net.ipv4', '1'),
  exit: 1,
  names: ['resources[2].settings["net.ipv4"]', 'directory'],
});
cases.push({
  name: 'live: a missing net.netfilter key without nf_conntrack in the desired state',
  live: true,
  desired: withSetting('net.netfilter.nf_conntrack_k8s_host_reconcile_none', '1'),
  exit: 1,
  names: ['resources[2].settings', 'nf_conntrack'],
});
if (existsSync('/etc/sysctl.d/99-sysctl.conf') && lstatSync('/etc/sysctl.d/99-sysctl.conf').isSymbolicLink()) {
  cases.push({
    name: "live: this machine's 99-sysctl.conf link as the owned file",
    live: true,
    desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'),
    exit: 1,
    names: ['resources[2].file', 'link to ../sysctl.conf'],
  });
}

// ---- the journal an earlier run left: untrusted input ----
// A journal is what WriteDoor writes (src/door/journal.ts): one JSON record a
// line, `begin` first, seq counting from 1. Each case below is an unfinished
// run whose one write record is wrong in one way; the next --apply (which
// settles unfinished runs, deleting their temp files) and a --rollback of it
// must stop at that record's line and change nothing. The journal's line is
// counted from the text written here.
const RUN_ID = '20261201T000000000Z-4242';
const RUN_DIR = `${REPORTS}/runs/${RUN_ID}`;
const sha = (t: string) => createHash('sha256').update(t).digest('hex');
const BEGIN = { seq: 1, at: '2026-12-01T00:00:00.000Z', kind: 'begin', mode: 'apply', run: RUN_ID, pid: 4242, root: '/img', live: false, tool: '0.1.0' };
/** A write of /etc/hostname as the door journals it, before it is done. */
const WRITE = {
  seq: 2,
  at: '2026-12-01T00:00:01.000Z',
  kind: 'write',
  path: '/etc/hostname',
  prior: { entry: 'file', backup: 'backup/etc/hostname', mode: 0o644, uid: 0, gid: 0, sha256: sha('node1\n') },
  mode: 0o644,
  uid: 0,
  gid: 0,
  sha256: sha('node2\n'),
  tmp: `/etc/.hostname.reconcile-${RUN_ID}-0123abcd`,
  report: false,
};
const journalText = (records: unknown[]) => records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
/** The root with `run/` already there (the lock's directory), a runs/ entry and its journal. */
const withJournal = (text: string) => (root: string) => {
  mkdirSync(path.join(root, 'run'), { recursive: true });
  mkdirSync(path.join(root, RUN_DIR, 'backup/etc'), { recursive: true });
  writeFileSync(path.join(root, RUN_DIR, 'backup/etc/hostname'), 'node1\n');
  writeFileSync(path.join(root, RUN_DIR, 'journal'), text);
};
const bad: Array<[string, unknown[], number, string]> = [
  ['a tmp naming /etc/passwd', [BEGIN, { ...WRITE, tmp: '/etc/passwd' }], 2, 'tmp /etc/passwd'],
  ['a tmp in another directory', [BEGIN, { ...WRITE, tmp: `/etc/ssh/.hostname.reconcile-${RUN_ID}-0123abcd` }], 2, 'tmp'],
  ["a tmp with another run's id", [BEGIN, { ...WRITE, tmp: '/etc/.hostname.reconcile-20260101T000000000Z-1-0123abcd' }], 2, 'tmp'],
  ["a tmp with more than the door's 8 hex digits", [BEGIN, { ...WRITE, tmp: `/etc/.hostname.reconcile-${RUN_ID}-0123abcd0` }], 2, 'tmp'],
  ['a tmp of another file', [BEGIN, { ...WRITE, tmp: `/etc/.passwd.reconcile-${RUN_ID}-0123abcd` }], 2, 'tmp'],
  ['no path', [BEGIN, { ...WRITE, path: undefined }], 2, 'path'],
  ['a path that is a number', [BEGIN, { ...WRITE, path: 7 }], 2, 'path'],
  ['a path that is null', [BEGIN, { ...WRITE, path: null }], 2, 'path'],
  ['a relative path', [BEGIN, { ...WRITE, path: 'etc/hostname', tmp: `etc/.hostname.reconcile-${RUN_ID}-0123abcd` }], 2, 'path'],
  ['a path with ..', [BEGIN, { ...WRITE, path: '/etc/../etc/hostname' }], 2, 'path'],
  ['a path with //', [BEGIN, { ...WRITE, path: '//etc/hostname' }], 2, 'path'],
  ['a path in /proc', [BEGIN, { ...WRITE, path: '/proc/sys/kernel/hostname', tmp: `/proc/sys/kernel/.hostname.reconcile-${RUN_ID}-0123abcd` }], 2, '/proc'],
  [
    'a path in the runs directory',
    [BEGIN, { ...WRITE, path: `${REPORTS}/runs/x/journal`, tmp: `${REPORTS}/runs/x/.journal.reconcile-${RUN_ID}-0123abcd`, prior: { entry: 'absent' } }],
    2,
    'runs directory',
  ],
  ['a report outside the reports directory', [BEGIN, { ...WRITE, report: true }], 2, 'reports directory'],
  ['a backup of another file', [BEGIN, { ...WRITE, prior: { ...WRITE.prior, backup: 'backup/etc/shadow' } }], 2, 'prior.backup'],
  ['a backup climbing out', [BEGIN, { ...WRITE, prior: { ...WRITE.prior, backup: '../../../../etc/shadow' } }], 2, 'prior.backup'],
  ['a sha256 that is not hex', [BEGIN, { ...WRITE, sha256: 'x'.repeat(64) }], 2, 'sha256'],
  ['a mode beyond 07777', [BEGIN, { ...WRITE, mode: 0o10000 }], 2, 'mode'],
  ['a negative uid', [BEGIN, { ...WRITE, uid: -1 }], 2, 'uid'],
  ['an unknown kind', [BEGIN, { ...WRITE, kind: 'exec' }], 2, 'kind'],
  ['an unexpected key', [BEGIN, { ...WRITE, command: 'rm -rf /' }], 2, 'command'],
  ['prior entry unknown', [BEGIN, { ...WRITE, prior: { entry: 'pipe' } }], 2, 'prior.entry'],
  ['a JSON array', [BEGIN, '["write","/etc/hostname"]'], 2, 'object'],
  ['a line that is not JSON', [BEGIN, '{"seq":2,', WRITE], 2, 'not a JSON record'],
  ['no begin record first', [{ ...WRITE, seq: 1 }], 1, 'begin'],
  ['a begin naming another run', [{ ...BEGIN, run: '20200101T000000000Z-1' }, WRITE], 1, 'run'],
  ['seq that skips', [BEGIN, { ...WRITE, seq: 5 }], 2, 'seq'],
  ['done of a record that is no action', [BEGIN, WRITE, { seq: 3, at: BEGIN.at, kind: 'done', of: 1 }], 3, 'not an action'],
  ['a record after end', [BEGIN, { seq: 2, at: BEGIN.at, kind: 'end', status: 'ok' }, { ...WRITE, seq: 3 }], 3, 'after the end record'],
  ['swapon of an option', [BEGIN, { seq: 2, at: BEGIN.at, kind: 'runtime', action: { step: 'swapoff', device: '-a' } }], 2, 'device'],
  ['a unit name that is an option', [BEGIN, { seq: 2, at: BEGIN.at, kind: 'runtime', action: { step: 'unit-stop', units: ['--root=/'] } }], 2, 'units'],
  [
    'a sysctl path outside /proc/sys',
    [BEGIN, { seq: 2, at: BEGIN.at, kind: 'runtime', action: { step: 'sysctl', key: 'kernel.x', path: '/etc/shadow', before: '0', value: '1' } }],
    2,
    'action.path',
  ],
  ['a link result of a write', [BEGIN, WRITE, { seq: 3, at: BEGIN.at, kind: 'done', of: 2, result: { removed: [], added: [] } }], 3, 'link result'],
];
for (const [label, records, line, key] of bad) {
  for (const mode of ['--apply', '--rollback']) {
    cases.push({
      name: `journal ${mode}: ${label}`,
      args: mode === '--apply' ? ['--apply'] : ['--rollback', RUN_ID],
      setup: withJournal(journalText(records)),
      exit: 1,
      names: [`${RUN_DIR}/journal:${line}: `, key, 'nothing was changed'],
    });
  }
}
// The runs directory or the reports directory resolving among the system's files.
cases.push({
  name: 'runs directory: a link to /etc',
  args: ['--apply'],
  setup: (root) => {
    mkdirSync(path.join(root, 'run'));
    mkdirSync(path.join(root, REPORTS), { recursive: true });
    symlinkSync('/etc', path.join(root, REPORTS, 'runs'));
  },
  exit: 1,
  names: [`${REPORTS}/runs is a symbolic link to /etc`, 'nothing was changed'],
});
cases.push({
  name: 'runs directory: a relative link',
  args: ['--rollback'],
  setup: (root) => {
    mkdirSync(path.join(root, 'run'));
    mkdirSync(path.join(root, REPORTS, 'elsewhere'), { recursive: true });
    symlinkSync('elsewhere', path.join(root, REPORTS, 'runs'));
  },
  exit: 1,
  names: [`${REPORTS}/runs is a symbolic link to elsewhere`],
});
cases.push({
  name: 'reports directory: a link to /etc',
  args: ['--apply'],
  setup: (root) => {
    mkdirSync(path.join(root, 'run'));
    mkdirSync(path.join(root, 'var/lib'), { recursive: true });
    symlinkSync('/etc', path.join(root, REPORTS));
  },
  exit: 1,
  names: ['resolves to /etc', 'reports_dir', 'nothing was changed'],
});
cases.push({
  name: 'reports directory: a link climbing to /',
  args: ['--rollback'],
  setup: (root) => {
    mkdirSync(path.join(root, 'run'));
    mkdirSync(path.join(root, 'var/lib'), { recursive: true });
    symlinkSync('../../..', path.join(root, REPORTS));
  },
  exit: 1,
  names: ['resolves to / ', 'reports_dir'],
});
// A run directory that is a link: never rolled back through.
cases.push({
  name: 'run directory: a link to /etc',
  args: ['--rollback', RUN_ID],
  setup: (root) => {
    mkdirSync(path.join(root, 'run'));
    mkdirSync(path.join(root, REPORTS, 'runs'), { recursive: true });
    writeFileSync(path.join(root, 'etc/journal'), journalText([BEGIN, WRITE]));
    symlinkSync('/etc', path.join(root, RUN_DIR));
  },
  exit: 1,
  names: [`${RUN_DIR} is a symbolic link to /etc`],
});

// ---- snapshots ----
type Snapshot = Map<string, string>;

/** path -> type, mode, owner, and bytes or link target, for every entry under `dir`. */
function snapshot(dir: string): Snapshot {
  const out: Snapshot = new Map();
  const walk = (p: string) => {
    const st = lstatSync(p);
    const rel = path.relative(dir, p) || '.';
    const meta = `${st.mode.toString(8)} ${st.uid}:${st.gid}`;
    if (st.isSymbolicLink()) out.set(rel, `link ${meta} -> ${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(rel, `dir ${meta}`);
      for (const n of readdirSync(p).sort()) walk(path.join(p, n));
    } else if (st.isFile()) out.set(rel, `file ${meta} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
    else out.set(rel, `special ${meta} ${st.rdev}`); // a fifo or device is never read: reading one can block forever
  };
  walk(dir);
  return out;
}

describe('hostile-input corpus', () => {
  it('has at least 150 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  cases.forEach((c, i) => {
    it(c.name, async () => {
      const { caseDir, root, file, before } = layCase(c, `case-${i}`);
      const reportsBefore = existsSync(REPORTS);

      const args = [...(c.args ?? ['--plan']), ...(c.noFile ? [] : ['-f', file]), ...(c.live ? [] : ['--root', root])];
      if (c.live) expect(args).not.toContain('--apply');
      const h = captureIo(c.isRoot ?? (c.live ? undefined : true));
      const code = await main(args, h.value);
      const out = h.stdout() + '\n' + h.stderr();

      expect(code, out).toBe(c.exit);
      for (const n of c.names) expect(out).toContain(typeof n === 'string' ? n : n(file));
      for (const a of c.absent ?? []) expect(out).not.toContain(a);
      expect(out).not.toMatch(/internal error|\n\s+at .*\(.*:\d+:\d+\)/);
      // Nothing changed in the root, nor beside it (the desired file, the case directory).
      expect(snapshot(caseDir)).toEqual(before);
      // The live cases never reach the reports directory on this machine.
      expect(existsSync(REPORTS)).toBe(reportsBefore);
    });
  });
});

/** One case's root and desired state under `work`, and the snapshot of its directory before the run. */
function layCase(c: (typeof cases)[number], name: string) {
  const caseDir = path.join(work, name);
  const root = path.join(caseDir, 'root');
  mkdirSync(root, { recursive: true });
  buildTree(root, { ...BASE_TREE, ...(c.tree ?? {}) });
  c.setup?.(root);
  const file = path.join(caseDir, 'desired-state.yaml');
  writeFileSync(file, c.desired ?? BASE);
  return { caseDir, root, file, before: snapshot(caseDir) };
}

// ---- the same corpus with --json: exactly one document on stdout ----
// Every case again with --json first on the command line: stdout parses as
// one JSON document (JSON.parse refuses two documents, or a document and
// text), a refusal is the error document naming the command, and the human
// message is still on stderr.
const COMMAND_FLAGS = ['--rollback', '--plan', '--apply'] as const;
describe('hostile-input corpus with --json', () => {
  cases.forEach((c, i) => {
    it(c.name, async () => {
      const { caseDir, root, file, before } = layCase(c, `json-case-${i}`);

      const given = c.args ?? ['--plan'];
      const args = ['--json', ...given.filter((a) => a !== '--json'), ...(c.noFile ? [] : ['-f', file]), ...(c.live ? [] : ['--root', root])];
      const h = captureIo(c.isRoot ?? (c.live ? undefined : true));
      const code = await main(args, h.value);
      const out = h.stdout() + '\n' + h.stderr();

      expect(code, out).toBe(c.exit);
      const doc = JSON.parse(h.stdout());
      expect(doc.format_version).toBe('1.0');
      expect(out).not.toMatch(/internal error|\n\s+at .*\(.*:\d+:\d+\)/);
      if (Object.hasOwn(doc, 'error')) {
        expect(code).toBe(1);
        // A refusal names what the text run names (a plan's lines differ between text and JSON).
        for (const n of c.names) expect(out).toContain(typeof n === 'string' ? n : n(file));
        expect(typeof doc.error).toBe('string');
        expect(doc.error).not.toBe('');
        expect(doc.error_detail.message).toBe(doc.error);
        // The same message for a person, on stderr.
        expect(h.stderr()).toContain(doc.error.split('\n')[0]);
        // The command the case names: rollback before plan (rollback --plan previews), else the first flag given.
        const flag = given.includes('--rollback') ? '--rollback' : given.find((a) => (COMMAND_FLAGS as readonly string[]).includes(a));
        expect(doc.command).toBe(flag === undefined ? null : flag.slice(2));
      } else {
        // No error: the command's own document (a plan, an apply, a rollback).
        expect(doc.mode === 'plan' || doc.mode === 'apply' || Array.isArray(doc.steps), out).toBe(true);
      }
      expect(snapshot(caseDir)).toEqual(before);
    });
  });
});

// ---- hostile runs directories, through the bundle ----
// open(2) of a fifo blocks until a writer comes and read(2) of one waits for
// data, so a reader that opens one hangs; a symlink is followed by open(2)
// unless O_NOFOLLOW. These cases run the bundle in a child with a timeout: a
// hang is a failure (exit code null), not a stuck test worker.
describe('hostile runs directories (the bundle, each run with a timeout)', () => {
  const BUNDLE = path.resolve('dist/reconcile.mjs');
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [BUNDLE, ...args], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, NO_COLOR: '1' } });
    return { code: r.status, signal: r.signal, out: `${r.stdout}\n${r.stderr}` };
  };
  const setupCase = () => {
    const caseDir = mkdtempSync(path.join(work, 'runs-'));
    const root = path.join(caseDir, 'root');
    mkdirSync(path.join(root, 'run'), { recursive: true });
    buildTree(root, BASE_TREE);
    const file = path.join(caseDir, 'desired-state.yaml');
    writeFileSync(file, BASE);
    mkdirSync(path.join(root, RUN_DIR), { recursive: true });
    return { caseDir, root, file };
  };
  const mkfifo = (p: string) => expect(spawnSync('mkfifo', [p]).status).toBe(0);
  /** A finished run that wrote /etc/hostname, as the door journals it, with its backup. */
  const finished = (root: string) => {
    writeFileSync(path.join(root, 'etc/hostname'), 'node2\n');
    mkdirSync(path.join(root, RUN_DIR, 'backup/etc'), { recursive: true });
    writeFileSync(path.join(root, RUN_DIR, 'backup/etc/hostname'), 'node1\n');
    writeFileSync(
      path.join(root, RUN_DIR, 'journal'),
      journalText([BEGIN, WRITE, { seq: 3, at: BEGIN.at, kind: 'done', of: 2 }, { seq: 4, at: BEGIN.at, kind: 'end', status: 'ok' }]),
    );
  };

  it('a journal that links to a file on the build machine: the next apply skips it, naming it, and never writes there', () => {
    const { root, file } = setupCase();
    const outside = mkdtempSync(path.join(tmpdir(), 'hostile-outside-'));
    try {
      const target = path.join(outside, 'x');
      const unfinished = journalText([BEGIN, WRITE]);
      writeFileSync(target, unfinished);
      // The same path inside the image holds the same text: a reader clamped to the root reads it there.
      mkdirSync(path.join(root, outside), { recursive: true });
      writeFileSync(path.join(root, target), unfinished);
      symlinkSync(target, path.join(root, RUN_DIR, 'journal'));
      const r = run(['--apply', '-f', file, '--root', root]);
      expect(r.signal).toBeNull();
      expect(r.out).toContain(`skipped ${RUN_DIR}/journal: it is a symbolic link to ${target}`);
      expect(readFileSync(target, 'utf8')).toBe(unfinished);
      expect(readFileSync(path.join(root, target), 'utf8')).toBe(unfinished);
      expect(readlinkSync(path.join(root, RUN_DIR, 'journal'))).toBe(target);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  }, 60_000);

  it('a journal that is a fifo: rollback of that run, its preview and the default rollback refuse it; apply skips it, naming it; none waits', () => {
    const { root, file } = setupCase();
    mkfifo(path.join(root, RUN_DIR, 'journal'));
    for (const args of [['--rollback', RUN_ID], ['--rollback', RUN_ID, '--plan'], ['--rollback']]) {
      const before = snapshot(root);
      const r = run([...args, '-f', file, '--root', root]);
      expect(r.signal, args.join(' ')).toBeNull();
      expect(r.code, r.out).toBe(1);
      expect(r.out).toContain(`${RUN_DIR}/journal is a fifo`);
      expect(snapshot(root)).toEqual(before);
    }
    const a = run(['--apply', '-f', file, '--root', root]);
    expect(a.signal).toBeNull();
    expect(a.out).toContain(`skipped ${RUN_DIR}/journal: it is a fifo`);
    expect(lstatSync(path.join(root, RUN_DIR, 'journal')).isFIFO()).toBe(true);
  }, 120_000);

  it('a run directory that links to /etc: apply skips it, naming it, and makes nothing under /etc', () => {
    const { root, file } = setupCase();
    rmSync(path.join(root, RUN_DIR), { recursive: true });
    writeFileSync(path.join(root, 'etc/journal'), journalText([BEGIN, WRITE]));
    symlinkSync('/etc', path.join(root, RUN_DIR));
    const etc = snapshot(path.join(root, 'etc'));
    const r = run(['--apply', '-f', file, '--root', root]);
    expect(r.signal).toBeNull();
    expect(r.out).toContain(`skipped ${RUN_DIR}: it is a symbolic link to /etc`);
    expect(readFileSync(path.join(root, 'etc/journal'), 'utf8')).toBe(journalText([BEGIN, WRITE]));
    const now = snapshot(path.join(root, 'etc'));
    // What a run directory holds (journal, backup/, plan.json...) never appears in /etc.
    expect([...now.keys()].filter((k) => !etc.has(k) && /^(journal|backup|plan\.json|result\.json|before\.json|rolled-back\.json)(\/|$)/.test(k))).toEqual([]);
  }, 60_000);

  it('the rolled-back marker is a fifo: rollback refuses, naming it, without waiting', () => {
    const { root, file } = setupCase();
    finished(root);
    mkfifo(path.join(root, RUN_DIR, 'rolled-back.json'));
    const before = snapshot(root);
    const r = run(['--rollback', RUN_ID, '-f', file, '--root', root]);
    expect(r.signal).toBeNull();
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain(`${RUN_DIR}/rolled-back.json is a fifo`);
    expect(snapshot(root)).toEqual(before);
  }, 60_000);

  it('a backup that links out of the root or is a fifo is never opened; a good one is restored', () => {
    for (const spoil of ['link', 'fifo', 'none'] as const) {
      const { root, file } = setupCase();
      finished(root);
      const backup = path.join(root, RUN_DIR, 'backup/etc/hostname');
      if (spoil !== 'none') rmSync(backup);
      if (spoil === 'link') symlinkSync('/etc/hostname', backup); // inside the image: /etc/hostname, now node2
      if (spoil === 'fifo') mkfifo(backup);
      const r = run(['--rollback', RUN_ID, '--force', '-f', file, '--root', root]);
      expect(r.signal, spoil).toBeNull();
      if (spoil === 'none') {
        expect(r.code, r.out).toBe(0);
        expect(readFileSync(path.join(root, 'etc/hostname'), 'utf8')).toBe('node1\n');
      } else {
        expect(r.code, r.out).toBe(1);
        expect(r.out).toContain(`${RUN_DIR}/backup/etc/hostname is ${spoil === 'link' ? 'a symbolic link' : 'a fifo'}`);
        expect(readFileSync(path.join(root, 'etc/hostname'), 'utf8')).toBe('node2\n');
      }
    }
  }, 120_000);
});
