// SysctlFile's diff: the owned file, the lines that would beat it (resolved
// or left to the operator as the policy says), and the running kernel. Pure.
import path from 'node:path';
import type { SysctlFileSpec } from './spec.js';
import type { Change } from '../types.js';
import { parseSysctlText, sameSysctlValue } from '../../sysctl/parse.js';
import { ownedFileProblem, SYSCTL_CONF, SYSCTL_MODELS, withFile } from '../../sysctl/order.js';
import type { SysctlConfFile } from '../../sysctl/order.js';
import { findConflicts, modelPhrase, type SysctlConflict } from '../../sysctl/conflicts.js';
import { commentOutLines, disabledMarker, moduleFor, overrideHeader, renderOwnedFile, wantedSettings } from '../../sysctl/owned-file.js';
import type { SysctlFileObserved, SysctlOp } from './observed.js';
import { sysctlPromise } from './promises.js';

/** Under /etc, or under where /etc really is when /etc itself is a link (an image with /etc -> etc.real). */
function isUnderEtc(p: string, etcReal: string): boolean {
  return p.startsWith('/etc/') || p.startsWith(`${etcReal}/`);
}

export function diff(spec: SysctlFileSpec, observed: SysctlFileObserved, ctx: { live: boolean }): Change<SysctlOp>[] {
  const changes: Change<SysctlOp>[] = [];
  const wanted = wantedSettings(spec);
  const owned = renderOwnedFile(spec);
  const ownedPath = spec.file;

  // 1. Our file. A symlink there (a mask, or a link elsewhere) is replaced, never written through.
  const replaceLink = observed.owned.link !== null;
  if (observed.owned.content !== owned || replaceLink) {
    const before = observed.owned.content;
    changes.push({
      id: `file:${ownedPath}`,
      action: before === null && !replaceLink ? 'create' : 'update',
      summary: replaceLink
        ? `replace the symlink ${ownedPath} -> ${observed.owned.link} with a file setting ${[...wanted.keys()].join(', ')}`
        : `${before === null ? 'create' : 'rewrite'} ${ownedPath} with ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')}`,
      file: { path: ownedPath, before, after: owned },
      op: { kind: 'owned', path: ownedPath, content: owned, replaceLink },
    });
  }

  // 2. Conflicts, judged against the files as they will be once ours is written.
  const prospective = withFile(observed.tree, ownedPath, owned, parseSysctlText(owned, ownedPath).assignments);
  for (const model of SYSCTL_MODELS) {
    const problem = ownedFileProblem(prospective, ownedPath, model);
    if (problem) {
      changes.push({
        id: `owned-not-read:${model}`,
        action: 'operator',
        summary: `${model === 'boot' ? 'systemd-sysctl at boot' : 'sysctl --system'} would not read ${ownedPath}`,
        operator: `${problem}; choose another file name or remove the other entry`,
        op: { kind: 'owned-not-read', problem },
        // The running kernel gets the values from apply; the file is what the next boot and sysctl --system miss.
        withdraws: [...wanted.keys()].map((k) => ({ promise: sysctlPromise(k), from: 'boot' as const })),
      });
    }
  }
  const conflicts = findConflicts(prospective, ownedPath, wanted);
  // Lines the rehearsal blames that the engine did not: the real programs win.
  const reh = observed.rehearsal?.status === 'ran' ? observed.rehearsal : null;
  for (const c of reh?.culprits ?? []) {
    if (conflicts.some((x) => x.realPath === c.realPath && x.line === c.line && x.key === c.key)) continue;
    const source = observed.tree.files.find((f) => f.path === c.file) ?? (c.file === SYSCTL_CONF ? observed.tree.sysctlConf : null);
    if (!source) continue;
    conflicts.push({
      key: c.key,
      wanted: c.wanted,
      value: c.value,
      file: c.file,
      line: c.line,
      realPath: c.realPath,
      models: c.models,
      explanation:
        `the rehearsal (the real programs in a private namespace) shows ${c.key} = ${c.value ?? 'unset'} ${modelPhrase(c.models)}, which the engine did not predict; ` +
        `bisection names ${c.realPath}:${c.line} (${c.text.trim()}); the rehearsal wins`,
      source,
    });
  }
  for (const u of reh?.unexplained ?? []) {
    changes.push({
      id: `rehearsal:${u.key}:${u.model}`,
      action: 'operator',
      summary: `the rehearsal shows ${u.key} = ${u.value ?? 'unset'} ${modelPhrase([u.model])} even with every planned change (wanted ${wanted.get(u.key)})`,
      operator: `no configuration line explains it (bisection in the namespace found none); check ${u.key} by hand with ${u.model === 'boot' ? 'systemd-sysctl' : 'sysctl --system'}`,
      op: {
        kind: 'conflict',
        conflict: { key: u.key, wanted: wanted.get(u.key)!, value: u.value, file: '', line: 0, realPath: '', models: [u.model], explanation: 'rehearsal' },
      },
      withdraws: [{ promise: sysctlPromise(u.key), from: 'boot' }],
    });
  }
  const byTarget = new Map<string, { target: string; source: SysctlConfFile; replaceLink: boolean; list: typeof conflicts }>();
  for (const c of conflicts) {
    let target: string | null = null;
    let replace = false;
    if (isUnderEtc(c.realPath, observed.etcReal ?? '/etc')) target = c.realPath;
    else if (!c.source.path.startsWith('/etc/') || path.posix.dirname(c.source.path) === '/etc/sysctl.d') {
      // A vendor entry (/usr/lib, /run, /usr/local/lib), or an /etc/sysctl.d link to one:
      // the systemd way is a same-named regular file in /etc/sysctl.d.
      target = path.posix.join('/etc/sysctl.d', path.posix.basename(c.source.path));
      replace = c.source.path === target;
    }
    if (spec.conflict_policy === 'fail' || target === null) {
      changes.push({
        id: `conflict:${c.realPath}:${c.line}:${c.key}`,
        action: 'operator',
        summary: c.explanation,
        operator:
          spec.conflict_policy === 'fail'
            ? `conflict_policy is fail: remove or comment out ${c.realPath}:${c.line}, or set conflict_policy: resolve`
            : `${c.realPath} is outside /etc and is not a sysctl.d entry that can be overridden; remove line ${c.line} by hand`,
        op: { kind: 'conflict', conflict: stripSource(c) },
        withdraws: [{ promise: sysctlPromise(c.key), from: 'boot' }],
      });
      continue;
    }
    const g = byTarget.get(target) ?? { target, source: c.source, replaceLink: replace, list: [] };
    g.list.push(c);
    byTarget.set(target, g);
  }
  for (const g of [...byTarget.values()].sort((a, b) => (a.target < b.target ? -1 : 1))) {
    const lines = [...new Set(g.list.map((c) => c.line))].sort((a, b) => a - b);
    const commented = commentOutLines(g.source.content, lines, disabledMarker(ownedPath));
    const inPlace = g.target === g.source.realPath;
    const after = inPlace ? commented : overrideHeader(g.source) + commented;
    const before = inPlace ? g.source.content : g.replaceLink ? g.source.content : null;
    const lineWord = `line${lines.length === 1 ? '' : 's'} ${lines.join(', ')}`;
    const action = inPlace ? `commenting out ${lineWord} of ${g.target}` : `overriding it with ${g.target}, a copy with ${lineWord} commented out`;
    changes.push({
      id: `conflict:${g.target}`,
      action: before === null ? 'create' : 'update',
      summary: `${g.list.map((c) => c.explanation).join('; ')}; ${action}`,
      file: { path: g.target, before, after },
      op: {
        kind: 'resolve',
        target: g.target,
        source: g.source.path,
        replaceLink: g.replaceLink,
        lines,
        content: after,
        conflicts: g.list.map(stripSource),
      },
    });
  }

  // 3. The running kernel.
  if (ctx.live && observed.runtime) {
    for (const [key, value] of wanted) {
      const now = observed.runtime[key] ?? null;
      if (now !== null && sameSysctlValue(now, value)) continue;
      changes.push({
        id: `runtime:${key}`,
        action: 'runtime',
        runtime: true,
        summary:
          now === null
            ? `set ${key} = ${value} in the running kernel (the key does not exist yet${moduleFor(key) ? `; it appears once ${moduleFor(key)} is loaded` : ''})`
            : `set ${key} = ${value} in the running kernel (now ${now})`,
        op: { kind: 'runtime', key, value },
      });
    }
  } else if (!ctx.live && changes.some((c) => c.file)) {
    // Offline the kernel is not ours to touch; systemd-sysctl applies the files at first boot.
    const values = Object.fromEntries(wanted);
    changes.push({
      id: 'deferred:runtime',
      action: 'deferred',
      summary: `at first boot systemd-sysctl applies ${[...wanted].map(([k, v]) => `${k} = ${v}`).join(', ')} from ${ownedPath}`,
      op: { kind: 'deferred', values },
    });
  }
  return changes;
}

function stripSource(c: SysctlConflict & { source: SysctlConfFile }): SysctlConflict {
  const { source: _source, ...rest } = c;
  return rest;
}
