// End to end through the CLI entry point, on fixture roots (offline mode):
// nothing here touches this machine's swap, modules or units.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync, readFileSync, rmSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { main } from '../src/cli.js';
import { runCli } from './helpers/run-cli.js';
import { captureIo } from './helpers/io.js';
import { DESIRED, FSTAB, swapModulesTree } from './helpers/swap-modules-tree.js';
import { mkdtempSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { mkdirSync, symlinkSync } from 'node:fs';

let root: string;
let work: string;
beforeEach(() => {
  ({ work, root } = swapModulesTree('cli-test-'));
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

const cli = (args: string[], opts: { isRoot?: boolean } = {}) => runCli(args, opts.isRoot);

describe('reconcile CLI', () => {
  it('plan exits 2 and shows the fstab diff; apply --root converges; a second plan exits 0', async () => {
    const f = ['-f', path.join(work, 'desired.yaml'), '--root', root];
    const plan = await cli(['--plan', ...f]);
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain('--- /etc/fstab');
    expect(plan.stdout).toContain('+++ /etc/fstab');
    expect(plan.stdout).toMatch(/^ {6}-\/swapfile\tnone\tswap\tsw\t0\t0$/m);
    expect(plan.stdout).toContain('+++ /etc/modules-load.d/k8s.conf');
    expect(plan.stdout).toMatch(/deferred to boot/);
    expect(readFileSync(path.join(root, 'etc/fstab'), 'utf8')).toBe(FSTAB);

    const apply = await cli(['--apply', ...f]);
    expect(apply.stderr).not.toMatch(/error/);
    expect(apply.code).toBe(0);
    const fstab = readFileSync(path.join(root, 'etc/fstab'), 'utf8');
    expect(fstab).not.toMatch(/^\/swapfile/m);
    // Every other line is byte-identical.
    const untouched = FSTAB.split('\n').filter((l) => !l.startsWith('/swapfile'));
    for (const line of untouched) expect(fstab.split('\n')).toContain(line);
    expect(readFileSync(path.join(root, 'etc/modules-load.d/k8s.conf'), 'utf8')).toMatch(/^overlay\nbr_netfilter\n$/m);
    // The original fstab is in the run's backup directory.
    const runs = readdirSync(path.join(root, 'root/ks/preflight/runs'));
    expect(runs).toHaveLength(1);
    expect(readFileSync(path.join(root, 'root/ks/preflight/runs', runs[0]!, 'backup/etc/fstab'), 'utf8')).toBe(FSTAB);
    // Offline there is no running kernel to describe.
    expect(existsSync(path.join(root, 'root/ks/preflight/before.json'))).toBe(false);

    const again = await cli(['--plan', ...f]);
    expect(again.stdout).toContain('No changes.');
    expect(again.code).toBe(0);

    const second = await cli(['--apply', '--json', ...f]);
    expect(second.code).toBe(0);
    const doc = JSON.parse(second.stdout);
    expect(doc.applied).toEqual([]);
    expect(doc.verified).toBe(true);
    expect(doc.backups).toEqual([]);
  });

  it('--json prints one document with format_version and per-resource changes', async () => {
    const r = await cli(['--plan', '--json', '-f', path.join(work, 'desired.yaml'), '--root', root]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout);
    expect(doc.format_version).toBe('1.0');
    expect(doc).toMatchObject({ mode: 'plan', live: false, root, before_state: null });
    expect(doc.resources.map((x: { type: string }) => x.type)).toEqual(['SwapOff', 'ModulesLoad']);
    const swap = doc.resources[0];
    expect(swap.in_sync).toBe(false);
    const fstabChange = swap.changes.find((c: { path: string | null }) => c.path === '/etc/fstab');
    expect(fstabChange).toMatchObject({ before: FSTAB, deferred: false, runtime: false, operator: null });
    expect(typeof fstabChange.id).toBe('string');
    expect(typeof fstabChange.action).toBe('string');
    expect(fstabChange.after).not.toMatch(/^\/swapfile/m);
    expect(doc.pending_changes).toBeGreaterThanOrEqual(2);
  });

  it('a bad desired state exits 1, names file:line:column and key, and changes nothing', async () => {
    const bad = path.join(work, 'bad.yaml');
    writeFileSync(bad, DESIRED.replace('modules: [overlay, br_netfilter]', 'modules: [overlay, br_netfilter]\n    persist: yes'));
    const r = await cli(['--apply', '-f', bad, '--root', root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}:6:5 resources[1].persist: unknown key`);
    expect(r.stderr).toContain('nothing was changed');
    expect(readFileSync(path.join(root, 'etc/fstab'), 'utf8')).toBe(FSTAB);
    expect(existsSync(path.join(root, 'root'))).toBe(false);
  });

  it('refuses a live apply as non-root before anything happens', async () => {
    const r = await cli(['--apply', '-f', path.join(work, 'desired.yaml')], { isRoot: false });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--apply on the live host needs root.*nothing was changed/);
  });

  it('needs exactly one of --plan and --apply', async () => {
    expect((await cli([])).code).toBe(1);
    expect((await cli(['--plan', '--apply'])).code).toBe(1);
    expect((await cli(['--frobnicate'])).code).toBe(1);
  });

  it('lists its providers', async () => {
    const r = await cli(['--providers']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(expect.arrayContaining(['SwapOff', 'ModulesLoad']));
  });
});

// ---------------------------------------------------------------------------
// reconcile --facts: the facts kubespray judges this host by, without a plan.
// Read-only on this machine; the expectations come from the kernel directly.
function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env: {} } };
}

describe('reconcile --facts', () => {
  it('prints facts.json for this host as one JSON document, and plans nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'facts-cli-'));
    const desired = path.join(dir, 'd.yaml');
    writeFileSync(desired, 'reports_dir: /tmp/never-written\nfacts:\n  source: native\nresources: []\n');
    const t = io();
    expect(await main(['--facts', '--json', '-f', desired], t.io)).toBe(0);
    const doc = JSON.parse(t.out.join(''));
    const memKb = Number(/^MemTotal:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]);
    expect(doc).toMatchObject({ format_version: '1.0', mode: 'facts' });
    expect(doc.facts.memtotal_mb).toBe(Math.floor(memKb / 1024));
    expect(doc.facts.kernel).toBe(release());
    expect(doc).not.toHaveProperty('resources');
  });

  it('refuses --root and a mode alongside it', async () => {
    for (const args of [
      ['--facts', '--root', '/tmp'],
      ['--facts', '--plan'],
    ]) {
      const t = io();
      expect(await main(args, t.io)).toBe(1);
      expect(t.err.join('')).toContain('--facts reads the running host');
    }
  });
});

// ---------------------------------------------------------------------------
// --json carries the ordering engine's verdicts, so pipelines (and the VM
// suite) can compare the prediction with the kernel after a boot.
describe('reconcile --plan --json', () => {
  let work: string;
  beforeEach(() => {
    work = mkdtempSync(path.join(tmpdir(), 'sysctl-summary-'));
    const root = path.join(work, 'root');
    mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
    writeFileSync(path.join(root, 'etc/sysctl.conf'), 'net.ipv4.ip_forward = 1\n');
    symlinkSync('../sysctl.conf', path.join(root, 'etc/sysctl.d/99-sysctl.conf'));
    writeFileSync(path.join(root, 'etc/sysctl.d/security-baseline.conf'), '# baseline\nnet.ipv4.ip_forward = 0\n');
    writeFileSync(path.join(work, 'desired.yaml'), 'reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.ipv4.ip_forward: 1\n');
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  describe('plan --json observed verdicts', () => {
    it('predicts each model: 0 at boot (a later file), 1 after sysctl --system (sysctl.conf last)', async () => {
      let out = '';
      const code = await main(['--plan', '--json', '--root', path.join(work, 'root'), '-f', path.join(work, 'desired.yaml')], {
        stdout: { write: (s: string) => (out += s) },
        stderr: { write: () => true },
        env: {},
      });
      expect(code).toBe(2);
      const observed = JSON.parse(out).resources[0].observed;
      expect(observed.runtime).toBeNull();
      expect(observed.verdicts.boot).toEqual([{ key: 'net.ipv4.ip_forward', value: '0', via: 'explicit', winner: '/etc/sysctl.d/security-baseline.conf:2' }]);
      expect(observed.verdicts.system).toEqual([{ key: 'net.ipv4.ip_forward', value: '1', via: 'explicit', winner: '/etc/sysctl.conf:1' }]);
    });
  });
});

describe('how much the text says, its colour, and a refused option in our own words', () => {
  const f = () => ['-f', path.join(work, 'desired.yaml'), '--root', root];

  it('-q: no header, no diff; the closing line and the next step', async () => {
    const r = await cli(['plan', '-q', ...f()]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('Plan: 3 changes pending.\nNext: run `reconcile apply` with the same options to make these 3 changes.\n');
  });

  it('-v and --verbose are accepted by plan and by the flag form; -q with -v is refused', async () => {
    expect((await cli(['plan', '-v', ...f()])).code).toBe(2);
    expect((await cli(['--plan', '--verbose', ...f()])).code).toBe(2);
    const both = await cli(['plan', '-q', '-v', ...f()]);
    expect([both.code, both.stderr.split('\n')[0]]).toEqual([1, 'reconcile: -q (--quiet) and -v (--verbose) say different things; give one']);
  });

  it('apply says what it is applying, not the plan again, then its result', async () => {
    const r = await cli(['apply', ...f()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('\nApplying 3 changes, 1 deferred to boot:\n  ~ SwapOff: comment out 1 swap line in /etc/fstab (line 3: /swapfile)\n');
    expect(r.stdout).not.toContain('Plan:');
    expect(r.stdout).not.toContain('--- /etc/fstab');
    expect(r.stdout.endsWith('\nApply complete: 3 changes applied and verified.\n')).toBe(true);
  });

  it('--color=always colours even with NO_COLOR set and without a terminal; --no-color and --color=never do not', async () => {
    const run = async (args: string[], env: NodeJS.ProcessEnv, isTTY: boolean) => {
      const h = captureIo();
      h.value.env = env;
      h.value.stdout.isTTY = isTTY;
      await main(args, h.value);
      return h.stdout();
    };
    expect(await run(['plan', '--color=always', ...f()], { NO_COLOR: '1' }, false)).toContain('\x1b[1mSwapOff\x1b[0m');
    expect(await run(['plan', '--color', 'always', ...f()], {}, false)).toContain('\x1b[');
    expect(await run(['plan', '--no-color', ...f()], {}, true)).not.toContain('\x1b[');
    expect(await run(['plan', '--color=never', ...f()], {}, true)).not.toContain('\x1b[');
    expect(await run(['plan', ...f()], {}, true)).toContain('\x1b[');
    expect(await run(['plan', ...f()], { NO_COLOR: '1' }, true)).not.toContain('\x1b[');
  });

  it.each([
    [['plan', '-x'], 'unknown option -x'],
    [['plan', '-qx'], 'unknown option -x (in -qx)'],
    [['plan', '--colour'], 'unknown option --colour'],
    [['plan', '-f'], '-f needs a value (FILE)'],
    [['plan', '-f', '--root', '/x'], '-f needs a value (FILE); a value that starts with "-" goes as --file=VALUE'],
    [['plan', '--quiet=yes'], '--quiet takes no value'],
    [['plan', '--color=blue'], '--color takes auto, always or never (--color=never, or --no-color)'],
    [['plan', '--no-color', '--color=always'], '--no-color and --color say different things; give one'],
    [['rollback', '-q'], '--quiet is not an option of rollback'],
  ])('%j is refused: %s', async (args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(new RegExp(`^reconcile(?: rollback)?: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect(r.stdout).toBe('');
  });
});
