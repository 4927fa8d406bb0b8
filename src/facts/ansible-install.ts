// The ansible-core version `ansible --version` would print, read from the
// installed files instead of starting Python (a quarter of a second). The CLI
// prints `ansible [core X]` with X = ansible.release.__version__ of the
// package its interpreter imports, so this finds that package the way
// Python's import system would for Debian's /usr/bin/python3.N, and reads
// release.py. Whatever the model does not cover (a venv, PYTHONPATH, a .pth
// path entry ahead of the package, a wrapper script) is `unknown`, and the
// caller runs `ansible --version` itself.
import path from 'node:path';
import type { TargetHost } from '../host.js';
import { commandScript } from './command-path.js';

export type InstalledAnsible = { known: true; version: string | null; from: string } | { known: false; reason: string };

// The console-script body pip (and Debian's ansible-core package) writes for
// `ansible = ansible.cli.adhoc:main`, after the #! line; both quote styles.
const ENTRY_POINTS = ['"', "'"].map((q) =>
  [
    '# -*- coding: utf-8 -*-',
    'import re',
    'import sys',
    'from ansible.cli.adhoc import main',
    `if __name__ == ${q}__main__${q}:`,
    `    sys.argv[0] = re.sub(r${q}(-script\\.pyw|\\.exe)?$${q}, ${q}${q}, sys.argv[0])`,
    '    sys.exit(main())',
    '',
  ].join('\n'),
);

const PYTHON_ENV = ['PYTHONPATH', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONNOUSERSITE', 'PYTHONSAFEPATH', 'PYTHONPLATLIBDIR', 'PYTHONEXECUTABLE'];

export async function installedAnsibleCore(host: TargetHost, env: NodeJS.ProcessEnv = process.env): Promise<InstalledAnsible> {
  const cmd = await commandScript(host, 'ansible', env, 'text');
  if (cmd.kind === 'unknown') return { known: false, reason: cmd.reason };
  if (cmd.kind === 'missing') return { known: true, version: null, from: 'no ansible on PATH' };
  const text = cmd.content;
  const nl = text.indexOf('\n');
  const shebang = nl < 0 ? text : text.slice(0, nl);
  const interp = /^#!\s*(\/\S+)\s*$/.exec(shebang)?.[1];
  if (!interp || !ENTRY_POINTS.includes(text.slice(nl + 1))) return { known: false, reason: `${cmd.named} is not the console script of ansible.cli.adhoc` };
  const setEnv = PYTHON_ENV.filter((v) => env[v] !== undefined && env[v] !== '');
  if (setEnv.length > 0) return { known: false, reason: `the environment sets ${setEnv.join(', ')}` };

  const python = await host.realTarget(interp).catch(() => null);
  const pyver = python ? /^\/usr\/bin\/python(3\.\d+)$/.exec(python)?.[1] : undefined;
  if (!python || !pyver) return { known: false, reason: `${cmd.named} runs ${interp}, not Debian's /usr/bin/python3.N` };
  for (const cfg of ['/usr/bin/pyvenv.cfg', '/usr/pyvenv.cfg']) {
    if (await host.exists(cfg)) return { known: false, reason: `${cfg} makes ${interp} a virtual environment` };
  }

  // sys.path of `/usr/bin/python3.N SCRIPT` on Debian, in order (site.py, Debian's dist-packages layout).
  const dirs: Array<{ dir: string; site: boolean }> = [
    { dir: path.posix.dirname(cmd.path), site: false },
    { dir: `/usr/lib/python${pyver.replace('.', '')}.zip`, site: false },
    { dir: `/usr/lib/python${pyver}`, site: false },
    { dir: `/usr/lib/python${pyver}/lib-dynload`, site: false },
  ];
  // site.py enables the user site only when the real and effective ids agree.
  if (process.getuid?.() === process.geteuid?.() && process.getgid?.() === process.getegid?.()) {
    if (env.HOME === undefined) return { known: false, reason: 'HOME is not set (the user site directory is unknown)' };
    dirs.push({ dir: `${env.HOME}/.local/lib/python${pyver}/site-packages`, site: true });
  }
  dirs.push(
    { dir: `/usr/local/lib/python${pyver}/dist-packages`, site: true },
    { dir: '/usr/lib/python3/dist-packages', site: true },
    { dir: `/usr/lib/python${pyver}/dist-packages`, site: true },
  );
  for (const { dir, site } of dirs) {
    const entries = await host.readDir(dir);
    if (!entries) {
      if (await host.exists(dir)) return { known: false, reason: `${dir} on sys.path is not a directory (a zip archive?)` };
      continue;
    }
    const names = entries.map((e) => e.name);
    // A directory named ansible is the package (a plain file named ansible, like the script itself, is no module).
    const pkg = names.includes('ansible') ? await host.readDir(`${dir}/ansible`) : null;
    if (pkg) {
      const init = pkg.map((e) => e.name).filter((n) => n.startsWith('__init__.'));
      if (!init.includes('__init__.py')) return { known: false, reason: `${dir}/ansible is not a regular package with __init__.py` };
      const release = `${dir}/ansible/release.py`;
      const src = await host.readFile(release).catch(() => null);
      if (src === null) return { known: false, reason: `${release} cannot be read` };
      const v = moduleStringConstant(src, '__version__');
      if (!v.ok) return { known: false, reason: `${release}: ${v.reason}` };
      return { known: true, version: v.value, from: release };
    }
    if (names.some((n) => n.startsWith('ansible.'))) return { known: false, reason: `${dir} has an ansible module file` };
    // A .pth path line puts its directory right after this one: ahead of the ones still to search.
    if (site) {
      for (const pth of names.filter((n) => n.endsWith('.pth')).sort()) {
        const lines = ((await host.readFile(`${dir}/${pth}`).catch(() => null)) ?? '').split('\n');
        // site.py: a line starting with "import" is executed, "#" is a comment, any other names a directory.
        if (lines.some((l) => l.trim() !== '' && !l.startsWith('#') && !/^import[ \t]/.test(l))) {
          return { known: false, reason: `${dir}/${pth} adds a path ahead of the rest of sys.path` };
        }
      }
    }
  }
  return { known: false, reason: `no ansible package on the sys.path of ${python}` };
}

/**
 * The value of NAME = '<string>' in a module made only of comments, blank
 * lines, `from __future__ import …` and NAME = <plain string literal or
 * name> statements (ansible/release.py's shape). Anything else is refused.
 */
export function moduleStringConstant(src: string, wanted: string): { ok: true; value: string } | { ok: false; reason: string } {
  let value: string | undefined;
  const lines = src.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.replace(/\r$/, '');
    const code = line.trim();
    if (code === '' || code.startsWith('#')) continue;
    if (/^from __future__ import \(?[A-Za-z_, ]+\)?$/.test(code)) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*) = (?:'([^'\\\n]*)'|"([^"\\\n]*)"|([A-Za-z_][A-Za-z0-9_]*))(?:\s+#.*)?$/.exec(line);
    if (!m) return { ok: false, reason: `line ${n + 1} is not a plain assignment` };
    if (m[1] !== wanted) continue;
    if (value !== undefined) return { ok: false, reason: `${wanted} is assigned twice` };
    const literal = m[2] ?? m[3];
    if (literal === undefined) return { ok: false, reason: `${wanted} is not a string literal` };
    value = literal;
  }
  return value === undefined ? { ok: false, reason: `no ${wanted}` } : { ok: true, value };
}
