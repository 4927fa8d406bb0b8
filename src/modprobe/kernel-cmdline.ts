// The kernel command line's two ways of stopping a module, read as their
// consumers read them. Pure.
//
// - `module_blacklist=a,b` is the kernel's own parameter (kernel/module/main.c:
//   core_param charp, so the last occurrence wins; blacklisted() compares each
//   comma-separated entry with the module's name exactly). The kernel refuses
//   to load the module (EPERM), by modprobe or as a dependency of another, now
//   and at every boot with that command line. Parameter names treat '-' and
//   '_' alike (parameq); "--" ends the kernel's parameters.
// - `modprobe.blacklist=a,b` is libkmod's (libkmod-config.c,
//   kcmdline_parse_result): every occurrence adds its comma-separated entries
//   to the blacklist as written. `modprobe NAME` ignores the blacklist, but
//   systemd-modules-load probes with KMOD_PROBE_APPLY_BLACKLIST, so the module
//   is skipped at boot ("is deny-listed") while a manual modprobe loads it.
//   The module name part must be exactly "modprobe".
// test/modprobe/kernel-cmdline.test.ts checks the libkmod side against `modprobe -c`
// reading a command line bound over /proc/cmdline in a private namespace.

export type CmdlineBlockKind = 'kernel' | 'kmod';

export interface CmdlineBlock {
  /** The wanted module the entry stops (directly, or through a dependency for the kernel's list). */
  module: string;
  /** The entry as written. */
  entry: string;
  /** The word of the command line that holds it, e.g. "module_blacklist=br_netfilter,nfs". */
  word: string;
  kind: CmdlineBlockKind;
  /** Set when the entry names a dependency of `module` rather than the module. */
  via?: string;
}

const isSpace = (c: string | undefined) => c !== undefined && ' \t\n\v\f\r'.includes(c);

/**
 * The kernel's parameters as parse_args reads them (kernel/params.c next_arg):
 * an argument ends at whitespace outside double quotes; a quote opening the
 * argument or its value is removed with the argument's last character when
 * that is a quote; a bare "--" ends the kernel's parameters.
 */
export function kernelParams(text: string): Array<{ param: string; value: string | null; word: string }> {
  const out: Array<{ param: string; value: string | null; word: string }> = [];
  let i = 0;
  while (i < text.length && isSpace(text[i])) i++;
  while (i < text.length) {
    let start = i;
    let inQuote = false;
    let quoted = false;
    if (text[start] === '"') {
      start++;
      inQuote = true;
      quoted = true;
    }
    let j = start;
    let equals = -1;
    for (; j < text.length; j++) {
      if (isSpace(text[j]) && !inQuote) break;
      if (equals < 0 && text[j] === '=') equals = j;
      if (text[j] === '"') inQuote = !inQuote;
    }
    let endArg = j; // exclusive
    const lastIsQuote = j > start && text[j - 1] === '"';
    let param: string;
    let value: string | null;
    if (equals < 0) {
      if (quoted && lastIsQuote) endArg--;
      param = text.slice(start, endArg);
      value = null;
    } else {
      param = text.slice(start, equals);
      let v = equals + 1;
      if (text[v] === '"') {
        v++;
        if (lastIsQuote) endArg--;
      } else if (quoted && lastIsQuote) endArg--;
      value = text.slice(v, Math.max(v, endArg));
    }
    const word = text.slice(i, j);
    if (value === null && param === '--') break;
    out.push({ param, value, word });
    i = j;
    while (i < text.length && isSpace(text[i])) i++;
  }
  return out;
}

/** The kernel's module_blacklist= in effect: the last occurrence (a charp parameter), or null. */
export function kernelBlacklist(text: string): { word: string; entries: string[] } | null {
  let found: { word: string; entries: string[] } | null = null;
  for (const p of kernelParams(text)) {
    if (p.param.replace(/-/g, '_') !== 'module_blacklist' || p.value === null) continue;
    found = { word: p.word, entries: p.value.split(',') };
  }
  return found;
}

/**
 * libkmod's blacklist from the command line, each entry with the word it
 * came from: kmod 30's kmod_config_parse_kcmdline state machine. A word is
 * MODNAME.PARAM[=VALUE]; quotes only group spaces inside a value and stay in
 * it; a word that starts with a quote has it moved to its value; anything
 * else malformed (a quote or space elsewhere, "=" before ".") is skipped.
 */
export function kmodBlacklist(text: string): Array<{ word: string; entry: string }> {
  const out: Array<{ word: string; entry: string }> = [];
  type State = 'modname' | 'param' | 'value' | 'ignore' | 'complete';
  let state: State = 'modname';
  let quoted = false;
  let modname = 0;
  let modEnd = -1;
  let param = -1;
  let value = -1;
  let quoteStart = -1;
  const buf = text + '\0';
  for (let p = 0; p < buf.length; p++) {
    const c = buf[p]!;
    if (c === '"') {
      quoted = !quoted;
      if (quoted && state === 'modname' && p === modname) {
        quoteStart = p;
        modname = p + 1;
      } else if (state !== 'value') state = 'ignore';
    } else if (c === '\0' || isSpace(c)) {
      if (quoted && state === 'value') {
        // a space inside a quoted value
      } else if (quoted) state = 'ignore';
      else if (state === 'value' || state === 'param') state = 'complete';
      else {
        modname = p + 1;
        state = 'modname';
        quoteStart = -1;
      }
    } else if (c === '.') {
      if (state === 'modname') {
        modEnd = p;
        param = p + 1;
        state = 'param';
      } else if (state === 'param') state = 'ignore';
    } else if (c === '=') {
      if (state === 'param') {
        value = p + 1;
        state = 'value';
      } else if (state === 'modname') state = 'ignore';
    }
    if (state === 'complete') {
      const mod = buf.slice(modname, modEnd);
      const paramText = buf.slice(param, p);
      let valueText = value >= 0 && value <= p ? buf.slice(value, p) : null;
      if (quoteStart >= 0 && quoteStart < modname && valueText !== null) valueText = `"${valueText}`;
      if (mod === 'modprobe' && paramText.startsWith('blacklist=') && valueText !== null) {
        const word = buf.slice(quoteStart >= 0 ? quoteStart : modname, p);
        for (const entry of valueText.split(',')) out.push({ word, entry });
      }
      modname = p + 1;
      state = 'modname';
      quoteStart = -1;
      value = -1;
    }
  }
  return out;
}

/**
 * What on `text` stops a wanted module: the kernel's list for the module or
 * any module it needs (`dependencies`: module -> the modules modules.dep
 * says it needs), libkmod's list for the module itself (systemd-modules-load
 * applies it to the module it probes, not to its dependencies).
 */
export function cmdlineBlocks(text: string, modules: string[], dependencies: ReadonlyMap<string, readonly string[]> = new Map()): CmdlineBlock[] {
  const out: CmdlineBlock[] = [];
  const kernel = kernelBlacklist(text);
  const kmod = kmodBlacklist(text);
  for (const m of modules) {
    if (kernel) {
      for (const name of [m, ...(dependencies.get(m) ?? [])]) {
        if (kernel.entries.includes(name)) out.push({ module: m, entry: name, word: kernel.word, kind: 'kernel', ...(name !== m ? { via: name } : {}) });
      }
    }
    for (const k of kmod) if (k.entry === m) out.push({ module: m, entry: k.entry, word: k.word, kind: 'kmod' });
  }
  return out;
}
