// Hostile inputs through the CLI entry point: malformed or malicious desired
// states, host trees left by a previous admin, and bad command lines. Every
// case asserts the exit code, that the message names the file, line or key,
// that the root tree is unchanged (path, bytes, mode, owner, link targets)
// and that nothing was written beside it. Offline cases plan or apply against
// a fixture root; the few live cases only --plan, and fail before anything of
// this machine beyond /proc/sys and the owned files' links is read.
import { afterAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
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
  cases.push({ name: 'module names that kmod treats as one', desired: text, exit: 1, names: [at(text, '- br-netfilter'), 'resources[1].modules[1]', 'modules[0]'] });
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
for (const dir of ['/', '/etc', '/etc/', '//etc', '/proc', '/proc/self', '/sys', '/sys/fs', '/dev', '/dev/shm', '/boot', '/usr', 'relative/dir', '/a/../etc', '"/r\\u0000"', '""', '"/var/\\nx"']) {
  const text = BASE.replace(`reports_dir: ${REPORTS}`, `reports_dir: ${dir}`);
  cases.push({ name: `reports_dir ${dir}`, desired: text, exit: 1, names: [at(text, 'reports_dir:'), 'reports_dir'] });
}

// ---- the same file or key twice ----
{
  const text = BASE + '  - type: SysctlFile\n    name: second\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      kernel.panic: 1\n';
  cases.push({ name: 'two SysctlFile resources, one file', desired: text, exit: 1, names: [at(text, '    file: /etc/sysctl.d/k8s.conf\n    settings:\n      kernel.panic'), 'resources[3].file', 'resources[2].file', at(text, 'file: /etc/sysctl.d/k8s.conf')] });
}
{
  const text = BASE + '  - type: SysctlFile\n    name: second\n    file: /etc/sysctl.d/k9s.conf\n    settings:\n      net/ipv4/ip_forward: 0\n';
  cases.push({ name: 'two resources, one key in two spellings', desired: text, exit: 1, names: [at(text, 'net/ipv4/ip_forward'), 'net.ipv4.ip_forward', 'resources[2].settings'] });
}
{
  const text = withSetting('net.ipv4.ip_forward', '1\n      net/ipv4/ip_forward: 0');
  cases.push({ name: 'one resource, one key in two spellings', desired: text, exit: 1, names: [at(text, 'net/ipv4/ip_forward'), 'sets net.ipv4.ip_forward'] });
}
{
  const text = BASE + '  - type: ModulesLoad\n    name: other\n    modules: [nf_conntrack]\n';
  cases.push({ name: 'two ModulesLoad resources, one (default) file', desired: text, exit: 1, names: [at(text, '  - type: ModulesLoad\n    name: other'), 'resources[3]', '/etc/modules-load.d/k8s.conf'] });
}
{
  const text = BASE + '  - type: SwapOff\n';
  cases.push({ name: 'SwapOff twice', desired: text, exit: 1, names: ['resources[3]', 'duplicates resources[0]'] });
}

// ---- limits and YAML ----
{
  const big = BASE + '# ' + 'x'.repeat(1024 * 1024) + '\n';
  cases.push({ name: 'a document over 1 MiB', desired: big, exit: 1, names: [(f) => `${f}:1:1`, '1 MiB'] });
  const bomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`), 'reports_dir: /r', 'resources: []', ''].join('\n');
  cases.push({ name: 'a YAML alias bomb', desired: bomb, exit: 1, names: [(f) => `${f}:`, 'aliases'], absent: ['ReferenceError', 'internal error', '    at '] });
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
  cases.push({ name: `YAML: ${label}`, desired: text, exit: 1, names: [needle ? at(text, needle) : (f: string) => `${f}:`], absent: ['internal error', '    at '] });
}
cases.push({ name: 'YAML: bytes that are not UTF-8', desired: Buffer.concat([Buffer.from('reports_dir: /r\xff\xfe\n', 'latin1'), Buffer.from('resources: [')]), exit: 1, names: [(f) => `${f}:`], absent: ['internal error'] });
cases.push({ name: 'YAML: NUL bytes', desired: Buffer.from('reports_dir: /r\0\nresources: []\n', 'latin1'), exit: 1, names: [(f) => `${f}:`], absent: ['internal error'] });

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
  cases.push({ name: `exact integer ${value}`, desired: withSetting('kernel.shmmax', value), exit: 2, names: [`kernel.shmmax = ${written}\n`], absent: ['e+', '18446744073692774000'] });
}

// ---- host trees ----
cases.push({
  name: "the owned sysctl file is procps's link 99-sysctl.conf -> ../sysctl.conf",
  desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'),
  tree: { 'etc/sysctl.conf': 'net.ipv4.ip_forward=1\n', 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } },
  exit: 1,
  names: [at(BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'), 'file: /etc/sysctl.d/99-sysctl.conf'), 'resources[2].file', "procps's link", '/etc/sysctl.conf'],
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
  tree: { 'usr/lib/vendor/50.conf': 'kernel.x = 1\n', 'etc/sysctl.d/50-vendor.conf': { link: '/usr/lib/vendor/50.conf' }, 'var/lib/dpkg/info/vendor-tune:amd64.list': '/.\n/etc\n/etc/sysctl.d\n/etc/sysctl.d/50-vendor.conf\n' },
  exit: 1,
  names: ['resources[2].file', "vendor-tune's link"],
});
{
  const d = BASE.replace('remove_swap_files: false', 'remove_swap_files: true');
  cases.push({ name: 'fstab lists /etc/passwd as swap, remove_swap_files on', desired: d, tree: { 'etc/fstab': '/etc/passwd none swap sw 0 0\n' }, exit: 2, names: ['/etc/fstab:1', '/etc/passwd', 'no swap signature'], absent: ['delete swap file /etc/passwd'] });
  cases.push({ name: 'fstab lists /etc/passwd as swap, apply refuses to run it', desired: d, tree: { 'etc/fstab': '/etc/passwd none swap sw 0 0\n' }, args: ['--plan', '--json'], exit: 2, names: ['remove-refused:/etc/passwd'], absent: ['"remove:/etc/passwd"'] });
  cases.push({ name: 'fstab lists a directory as swap', desired: d, tree: { 'etc/fstab': '/etc none swap sw\n' }, exit: 2, names: ['/etc/fstab:1', 'is a directory'] });
  cases.push({ name: 'fstab lists a symlink to /etc/shadow as swap', desired: d, tree: { 'etc/shadow': 'root:*:1::::::\n', 'swapfile': { link: '/etc/shadow' }, 'etc/fstab': '/swapfile none swap sw\n' }, exit: 2, names: ['/etc/fstab:1', 'symlink'] });
  cases.push({ name: 'a .swap unit names /etc/hostname', desired: d, tree: { 'etc/fstab': '', 'etc/systemd/system/evil.swap': '[Swap]\nWhat=/etc/hostname\n[Install]\nWantedBy=swap.target\n', 'etc/systemd/system/swap.target.wants/evil.swap': { link: '/etc/systemd/system/evil.swap' } }, exit: 2, names: ['evil.swap', '/etc/hostname', 'no swap signature'] });
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
cases.push({ name: 'fstab: swap,x is not swap', tree: { 'etc/fstab': '/dev/sde1 none swap,x sw\n' }, exit: 2, names: ['mask swap.target'], absent: ['/etc/fstab (line'] });
cases.push({ name: 'fstab: a bad passno makes libmount ignore the line', tree: { 'etc/fstab': '/dev/sde1 none swap sw 0 x\n' }, exit: 2, names: ['mask swap.target'], absent: ['/etc/fstab (line'] });
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
cases.push({ name: 'modprobe.d: an install command of unknown effect is an operator decision', tree: { 'etc/modprobe.d/k.conf': 'install br_netfilter /usr/local/sbin/load-bridge\n' }, exit: 2, names: ['/etc/modprobe.d/k.conf:1', 'unknown', 'cannot tell'] });
cases.push({ name: 'modprobe.d: an install that loads the module is left alone', tree: { 'etc/modprobe.d/k.conf': 'install br_netfilter /sbin/modprobe --ignore-install br_netfilter $CMDLINE_OPTS && echo ok\n' }, exit: 2, names: ['modules-load.d/k8s.conf'], absent: ['/etc/modprobe.d/k.conf'] });
cases.push({ name: 'modprobe.d: a commented-out line stays out', tree: { 'etc/modprobe.d/k.conf': '# install overlay /bin/true \\\nblacklist overlay\n' }, exit: 2, names: ['modules-load.d/k8s.conf'], absent: ['/etc/modprobe.d/k.conf'] });
cases.push({ name: 'modprobe.d: a CRLF blacklist names another module', tree: { 'etc/modprobe.d/k.conf': 'blacklist br_netfilter\r\n' }, exit: 2, names: ['modules-load.d/k8s.conf'], absent: ['/etc/modprobe.d/k.conf'] });

// ---- the command line ----
cases.push({ name: 'CLI: --plan and --apply together', args: ['--plan', '--apply'], exit: 1, names: ['give exactly one of --plan'] });
cases.push({ name: 'CLI: neither --plan nor --apply', args: [], exit: 1, names: ['give exactly one of --plan'] });
cases.push({ name: 'CLI: an unknown option', args: ['--plan', '--force'], exit: 1, names: ['--force'] });
cases.push({ name: 'CLI: a positional argument', args: ['--plan', 'extra'], exit: 1, names: ['extra'] });
cases.push({ name: 'CLI: -f without a value', args: ['--plan', '-f'], noFile: true, exit: 1, names: ['-f'] });
cases.push({ name: 'CLI: -f names a missing file', args: ['--plan', '-f', path.join(work, 'nope.yaml')], noFile: true, exit: 1, names: [`${path.join(work, 'nope.yaml')}:1:1`, 'cannot read'] });
cases.push({ name: 'CLI: -f names a directory', args: ['--plan', '-f', work], noFile: true, exit: 1, names: [`${work}:1:1`, 'directory'] });
cases.push({ name: 'CLI: -f /dev/zero', args: ['--plan', '-f', '/dev/zero'], noFile: true, exit: 1, names: ['/dev/zero:1:1', 'not a regular file'] });
cases.push({ name: 'CLI: -f /dev/null', args: ['--plan', '-f', '/dev/null'], noFile: true, exit: 1, names: ['/dev/null:1:1'] });
cases.push({ name: 'CLI: --apply on a bad desired state', args: ['--apply'], desired: withSetting('kernel.shmmax', '"1\\r"'), exit: 1, names: ['resources[2].settings["kernel.shmmax"]', 'nothing was changed'] });
cases.push({ name: 'CLI: --apply with a package link', args: ['--apply'], desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'), tree: { 'etc/sysctl.conf': 'x=1\n', 'etc/sysctl.d/99-sysctl.conf': { link: '../sysctl.conf' } }, exit: 1, names: ["procps's link", 'nothing was changed'] });
cases.push({ name: 'CLI: --apply --json with reports_dir /etc', args: ['--apply', '--json'], desired: BASE.replace(`reports_dir: ${REPORTS}`, 'reports_dir: /etc'), exit: 1, names: ['reports_dir'] });
cases.push({ name: 'CLI: --apply with a name that injects a line', args: ['--apply'], desired: BASE.replace('  - type: SysctlFile\n', `  - type: SysctlFile\n    name: ${JSON.stringify('k\nkernel.panic = 1')}\n`), exit: 1, names: ['resources[2].name'] });
cases.push({ name: 'CLI: --apply with an alias bomb', args: ['--apply'], desired: 'a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n', exit: 1, names: ['aliases'], absent: ['internal error'] });

// ---- live, --plan only: fails at the desired-state check, before observing ----
cases.push({ name: 'live: a key missing under /proc/sys', live: true, desired: withSetting('kernel.k8s_host_reconcile_no_such_key', '1'), exit: 1, names: ['resources[2].settings["kernel.k8s_host_reconcile_no_such_key"]', '/proc/sys/kernel/k8s_host_reconcile_no_such_key does not exist'] });
cases.push({ name: 'live: a key that is a directory of keys', live: true, desired: withSetting('net.ipv4', '1'), exit: 1, names: ['resources[2].settings["net.ipv4"]', 'directory'] });
cases.push({ name: 'live: a missing net.netfilter key without nf_conntrack in the desired state', live: true, desired: withSetting('net.netfilter.nf_conntrack_k8s_host_reconcile_none', '1'), exit: 1, names: ['resources[2].settings', 'nf_conntrack'] });
if (existsSync('/etc/sysctl.d/99-sysctl.conf') && lstatSync('/etc/sysctl.d/99-sysctl.conf').isSymbolicLink()) {
  cases.push({ name: "live: this machine's 99-sysctl.conf link as the owned file", live: true, desired: BASE.replace('/etc/sysctl.d/k8s.conf', '/etc/sysctl.d/99-sysctl.conf'), exit: 1, names: ['resources[2].file', 'link to ../sysctl.conf'] });
}

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
    } else if (!st.isFile()) out.set(rel, `special ${meta} ${st.rdev}`); // a fifo or device is never read, here either
    else out.set(rel, `file ${meta} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`);
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
      const caseDir = path.join(work, `case-${i}`);
      const root = path.join(caseDir, 'root');
      mkdirSync(root, { recursive: true });
      buildTree(root, { ...BASE_TREE, ...(c.tree ?? {}) });
      c.setup?.(root);
      const file = path.join(caseDir, 'desired-state.yaml');
      writeFileSync(file, c.desired ?? BASE);
      const before = snapshot(caseDir);
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

// ---- issue 25: entries that are no regular file, huge files, hostile locks and journals ----
// Each case runs the bundle in a child process with a deadline: a read that blocks (a fifo) or never ends (a
// character device) would block the event loop of an in-process run, so only a process killed at its deadline
// shows it. What is expected comes from POSIX and the kernel: open(2) of a fifo waits for a writer unless
// O_NONBLOCK, /dev/zero (char 1:5) reads without end, open(2) of a unix socket fails with ENXIO, kill(0, 0) and
// kill(-1, 0) succeed for any caller (they address a process group / every process), so pid <= 0 names no run.
const BUNDLE = path.resolve('dist/reconcile.mjs');
const DEADLINE_MS = 20_000;
const RUNS = `${REPORTS}/runs`;
const OLD_RUN = '20261130T000000000Z-4242';
const LOCK = 'run/k8s-host-reconcile.lock';

interface EntryCase {
  name: string;
  kind: 'fifo' | 'device' | 'socket' | 'size' | 'lock' | 'journal';
  setup: (root: string) => void;
  /** CLI arguments before -f/--root (default --plan). */
  args?: string[];
  /** Desired-state text (default BASE). */
  desired?: string;
  exit: number;
  names: string[];
  absent?: string[];
  /** The run may change the root (an apply that goes on): otherwise the case directory must stay as it was. */
  changes?: boolean;
  /** Checks on the root afterwards. */
  after?: (root: string) => void;
}

const sh = (cmd: string, ...args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
};
const put = (root: string, rel: string, make: (abs: string) => void) => {
  const abs = path.join(root, rel);
  mkdirSync(path.dirname(abs), { recursive: true });
  make(abs);
};
const fifo = (rel: string) => (root: string) => put(root, rel, (abs) => sh('mkfifo', abs));
/** A character device node 1:5 (what /dev/zero is) inside the root. */
const zero = (rel: string) => (root: string) => put(root, rel, (abs) => sh('mknod', abs, 'c', '1', '5'));
const link = (rel: string, to: string) => (root: string) => put(root, rel, (abs) => symlinkSync(to, abs));
/** A unix socket left in the tree by a process that bound it (the inode stays after the process exits). */
const socket = (rel: string) => (root: string) => put(root, rel, (abs) => sh('python3', '-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', abs));
/** A sparse file of `bytes`: costs no disk. */
const sparse = (rel: string, bytes: number) => (root: string) => put(root, rel, (abs) => { writeFileSync(abs, 'kernel.panic = 1\n'); truncateSync(abs, bytes); });
const lockText = (text: string) => (root: string) => put(root, LOCK, (abs) => writeFileSync(abs, text));
const all = (...fs: Array<(root: string) => void>) => (root: string) => fs.forEach((f) => f(root));

const SIXTEEN_MIB = 16 * 1024 * 1024;
/** BASE without the first-boot install (the fixture has no node for it): an apply of it converges, exit 0. */
const APPLIES = `first_boot: off\n${BASE}`;
const entryCases: EntryCase[] = [];

// Readers of configuration directories: such an entry is not read; the run goes on and names it.
for (const [label, setup, listed] of [
  ['a fifo in sysctl.d', fifo('etc/sysctl.d/50-fifo.conf'), '/etc/sysctl.d/50-fifo.conf is a fifo, not a regular file'],
  ['a sysctl.d link to a fifo', all(fifo('srv/pipe'), link('etc/sysctl.d/50-pipe.conf', '/srv/pipe')), '/etc/sysctl.d/50-pipe.conf is a fifo, not a regular file'],
  ['a fifo in modprobe.d', fifo('etc/modprobe.d/fifo.conf'), '/etc/modprobe.d/fifo.conf is a fifo, not a regular file'],
  ['a fifo in modules-load.d', fifo('etc/modules-load.d/fifo.conf'), '/etc/modules-load.d/fifo.conf is a fifo, not a regular file'],
] as const) {
  entryCases.push({ name: `fifo: ${label}`, kind: 'fifo', setup, exit: 2, names: [listed, 'what it sets is unknown'] });
}
for (const [label, setup, listed] of [
  ['a sysctl.d link to /dev/zero', all(zero('dev/zero'), link('etc/sysctl.d/60-zero.conf', '/dev/zero')), '/etc/sysctl.d/60-zero.conf is a character device, not a regular file'],
  ['a character device in modprobe.d', zero('etc/modprobe.d/zero.conf'), '/etc/modprobe.d/zero.conf is a character device, not a regular file'],
] as const) {
  entryCases.push({ name: `device: ${label}`, kind: 'device', setup, exit: 2, names: [listed, 'what it sets is unknown'] });
}
entryCases.push({ name: 'socket: a unix socket in sysctl.d', kind: 'socket', setup: socket('etc/sysctl.d/70-sock.conf'), exit: 2, names: ['/etc/sysctl.d/70-sock.conf is a socket, not a regular file', 'what it sets is unknown'] });

// Unit files: systemd's units are regular files; an enabled swap unit whose file is a fifo or a device stops the
// plan, named; a fifo drop-in of it is not read (the plan goes on with the unit's own file).
const SYSD = 'etc/systemd/system';
const enabledSwap = (make: (root: string) => void) => all(make, link(`${SYSD}/swap.target.wants/evil.swap`, '/etc/systemd/system/evil.swap'));
entryCases.push({ name: 'fifo: an enabled swap unit linking to a fifo', kind: 'fifo', setup: enabledSwap(all(fifo('srv/pipe'), link(`${SYSD}/evil.swap`, '/srv/pipe'))), exit: 1, names: ['/srv/pipe', 'not a regular file: fifo'] });
entryCases.push({ name: 'fifo: a drop-in of an enabled swap unit', kind: 'fifo', setup: enabledSwap(all((root) => put(root, `${SYSD}/evil.swap`, (abs) => writeFileSync(abs, '[Swap]\nWhat=/swapfile\n')), fifo(`${SYSD}/evil.swap.d/x.conf`))), exit: 2, names: ['disable evil.swap (/swapfile)'] });
entryCases.push({ name: 'device: an enabled swap unit linking to /dev/zero', kind: 'device', setup: enabledSwap(all(zero('dev/zero'), link(`${SYSD}/evil.swap`, '/dev/zero'))), exit: 1, names: ['/dev/zero', 'not a regular file: character device'] });

// A file the plan cannot do without: a clear error naming it, nothing changed.
entryCases.push({ name: 'fifo: /etc/fstab', kind: 'fifo', setup: (root) => { rmSync(path.join(root, 'etc/fstab')); fifo('etc/fstab')(root); }, exit: 1, names: ['/etc/fstab', 'not a regular file: fifo'] });
entryCases.push({ name: 'fifo: the owned sysctl file', kind: 'fifo', setup: fifo('etc/sysctl.d/k8s.conf'), exit: 1, names: ['/etc/sysctl.d/k8s.conf', 'not a regular file: fifo'] });
entryCases.push({ name: 'fifo: --apply with the owned modules file a fifo', kind: 'fifo', args: ['--apply'], setup: fifo('etc/modules-load.d/k8s.conf'), exit: 1, names: ['/etc/modules-load.d/k8s.conf', 'not a regular file: fifo'] });
entryCases.push({ name: 'device: /etc/fstab links to /dev/zero', kind: 'device', setup: (root) => { rmSync(path.join(root, 'etc/fstab')); zero('dev/zero')(root); link('etc/fstab', '/dev/zero')(root); }, exit: 1, names: ['/etc/fstab', 'not a regular file: character device'] });
entryCases.push({ name: 'device: --apply with the owned sysctl file linking to /dev/zero', kind: 'device', args: ['--apply'], setup: all(zero('dev/zero'), link('etc/sysctl.d/k8s.conf', '/dev/zero')), exit: 1, names: ['/etc/sysctl.d/k8s.conf', 'not a regular file: character device'] });
entryCases.push({ name: 'size: a sysctl.d file of 16 MiB + 1 byte', kind: 'size', setup: sparse('etc/sysctl.d/80-huge.conf', SIXTEEN_MIB + 1), exit: 1, names: ['/etc/sysctl.d/80-huge.conf', 'larger than 16 MiB', `${SIXTEEN_MIB + 1} bytes`] });
entryCases.push({ name: 'size: /etc/fstab of 64 MiB', kind: 'size', setup: (root) => { rmSync(path.join(root, 'etc/fstab')); sparse('etc/fstab', 4 * SIXTEEN_MIB)(root); }, exit: 1, names: ['/etc/fstab', 'larger than 16 MiB'] });

// The lock: an entry that is not a lock file of ours stops the run, named, and stays as it was.
for (const [label, setup, kind] of [
  ['a fifo', fifo(LOCK), 'fifo'],
  ['a directory', (root: string) => mkdirSync(path.join(root, LOCK), { recursive: true }), 'directory'],
  ['a link to a lock-shaped file in the image', all((root: string) => put(root, 'srv/held', (abs) => writeFileSync(abs, JSON.stringify({ pid: process.pid, pid_start: null, started: 'x', mode: 'apply' }))), link(LOCK, '/srv/held')), 'symbolic link'],
  ['a link to /dev/zero', link(LOCK, '/dev/zero'), 'symbolic link'],
  ['a character device', zero(LOCK), 'character device'],
] as const) {
  entryCases.push({
    name: `lock: ${label}`, kind: 'lock', args: ['--apply'], setup, exit: 1,
    names: [`cannot take the run lock /run/k8s-host-reconcile.lock: it is a ${kind}, not a lock file this tool writes; nothing was changed`],
  });
}
entryCases.push({ name: 'lock: 5000 bytes', kind: 'lock', args: ['--apply'], setup: lockText(JSON.stringify({ pid: process.pid, pid_start: null, started: 'x', mode: 'apply' }) + ' '.repeat(5000)), exit: 1, names: ['cannot take the run lock /run/k8s-host-reconcile.lock: it is larger than 4096 bytes'] });
// Garbage in a regular lock file names no run: taken over, saying why; the apply goes on.
for (const [label, text, why] of [
  ['pid 0', { pid: 0, pid_start: null, started: 'x', mode: 'apply' }, 'its pid 0 is not a process id (an integer above 0)'],
  ['pid -1', { pid: -1, pid_start: null, started: 'x', mode: 'apply' }, 'its pid -1 is not a process id (an integer above 0)'],
  ['pid 1.5', { pid: 1.5, pid_start: null, started: 'x', mode: 'apply' }, 'its pid 1.5 is not a process id (an integer above 0)'],
  ['pid "1" (a string)', { pid: '1', pid_start: null, started: 'x', mode: 'apply' }, 'its pid "1" is not a process id (an integer above 0)'],
  ['no pid', { pid_start: null, started: 'x', mode: 'apply' }, 'it names no pid'],
  ['no started time', { pid: process.pid, pid_start: null, mode: 'apply' }, 'its started time is missing'],
  ['a JSON list', [process.pid], 'it is not a JSON object'],
  ['empty', '', 'it is empty'],
] as const) {
  entryCases.push({
    name: `lock: ${label}`, kind: 'lock', args: ['--apply'], desired: APPLIES, setup: lockText(typeof text === 'string' ? text : JSON.stringify(text)), exit: 0, changes: true,
    names: [`took over an unreadable lock /run/k8s-host-reconcile.lock: ${why}\n`],
    after: (root) => expect(readdirSync(path.join(root, 'run'))).toEqual([]),
  });
}

// A previous run's journal that is no regular file: named, never waited on or read without end.
const journalOf = (root: string) => path.join(root, RUNS.slice(1), OLD_RUN, 'journal');
const oldRun = (make: (abs: string) => void) => (root: string) => put(root, path.relative(root, journalOf(root)), make);
for (const [label, make, kind] of [
  ['a fifo', (abs: string) => sh('mkfifo', abs), 'fifo'],
  ['a character device', (abs: string) => sh('mknod', abs, 'c', '1', '5'), 'character device'],
] as const) {
  entryCases.push({ name: `journal: --apply with an earlier run's journal ${label}`, kind: 'journal', args: ['--apply'], setup: oldRun(make), exit: 1, changes: true, names: [`${RUNS}/${OLD_RUN}/journal`, `not a regular file: ${kind}`] });
  entryCases.push({ name: `journal: --rollback of a run whose journal is ${label}`, kind: 'journal', args: ['--rollback', OLD_RUN], setup: oldRun(make), exit: 1, names: [`${RUNS}/${OLD_RUN}/journal`, `not a regular file: ${kind}`] });
}

describe('hostile entries: fifos, devices, sockets, huge files, hostile locks and journals (issue 25; the bundle, each run with a deadline)', () => {
  it('covers every class', () => {
    const count = (k: EntryCase['kind']) => entryCases.filter((c) => c.kind === k).length;
    expect({ fifo: count('fifo'), device: count('device'), socket: count('socket'), size: count('size'), lock: count('lock'), journal: count('journal') })
      .toEqual({ fifo: 9, device: 5, socket: 1, size: 2, lock: 14, journal: 4 });
    expect(new Set(entryCases.map((c) => c.name)).size).toBe(entryCases.length);
  });

  entryCases.forEach((c, i) => {
    it(c.name, () => {
      const caseDir = path.join(work, `entry-${i}`);
      const root = path.join(caseDir, 'root');
      mkdirSync(root, { recursive: true });
      buildTree(root, BASE_TREE);
      c.setup(root);
      const file = path.join(caseDir, 'desired-state.yaml');
      writeFileSync(file, c.desired ?? BASE);
      const before = snapshot(caseDir);
      const started = Date.now();
      const r = spawnSync(process.execPath, [BUNDLE, ...(c.args ?? ['--plan']), '-f', file, '--root', root], {
        encoding: 'utf8', timeout: DEADLINE_MS, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' },
      });
      const out = `${r.stdout}\n${r.stderr}`;
      expect({ killedAtDeadline: r.signal === 'SIGKILL', ms: Date.now() - started < DEADLINE_MS }, out.slice(-2000)).toEqual({ killedAtDeadline: false, ms: true });
      expect(r.status, out.slice(-2000)).toBe(c.exit);
      for (const n of c.names) expect(out).toContain(n);
      for (const a of c.absent ?? []) expect(out).not.toContain(a);
      expect(out).not.toMatch(/internal error|\n\s+at .*\(.*:\d+:\d+\)/);
      if (!c.changes) expect(snapshot(caseDir)).toEqual(before);
      // The lock's temporary never stays behind.
      expect(existsSync(path.join(root, 'run')) ? readdirSync(path.join(root, 'run')).filter((n) => n.startsWith('k8s-host-reconcile.lock.')) : []).toEqual([]);
      c.after?.(root);
    }, DEADLINE_MS + 10_000);
  });
});
