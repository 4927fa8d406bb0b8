// npm run test:mutation [group ...]: StrykerJS over the pure modules, one
// group at a time (never two Stryker runs at once: the machine is shared),
// then MUTATION.md from the JSON reports. `--report-only` rewrites
// MUTATION.md from the reports already in reports/mutation/; `--prune` also drops
// the kept.json entries that no survivor of those reports uses.
// Survivors we keep are justified in stryker/kept.json; a survivor without an
// entry there is listed as "not justified", and the exit code says so.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { groups } from '../stryker/groups.mjs';

const args = process.argv.slice(2);
const reportOnly = args.includes('--report-only');
const wanted = args.filter((a) => !a.startsWith('--'));
for (const g of wanted) if (!groups[g]) throw new Error(`unknown group ${g}; groups: ${Object.keys(groups).join(', ')}`);
const run = wanted.length > 0 ? wanted : Object.keys(groups);

const minutes = {};
if (!reportOnly) {
  for (const g of run) {
    const t0 = Date.now();
    console.log(`== mutation group ${g}`);
    const r = spawnSync('npx', ['stryker', 'run', `stryker/${g}.conf.mjs`], { stdio: 'inherit' });
    minutes[g] = (Date.now() - t0) / 60000;
    if (r.status !== 0) {
      console.error(`stryker failed for group ${g} (exit ${r.status})`);
      process.exit(1);
    }
  }
}

const kept = JSON.parse(readFileSync('stryker/kept.json', 'utf8'));
/** A kept survivor is named by file, mutator, the original code and its replacement (not the line: lines move). */
const keyOf = (file, mutator, original, replacement) => `${file}\u0000${mutator}\u0000${original.trim()}\u0000${replacement.trim()}`;
const reasons = new Map(kept.filter((k) => k.line === undefined).map((k) => [keyOf(k.file, k.mutator, k.original, k.replacement), k.reason]));
// An entry with a line tells apart two identical mutations of one file (e.g. two '' literals).
const reasonsAt = new Map(
  kept.filter((k) => k.line !== undefined).map((k) => [`${keyOf(k.file, k.mutator, k.original, k.replacement)}\u0000${k.line}`, k.reason]),
);
const used = new Set();
// Lines move when the file is edited: an entry with a line whose line no longer
// matches names the nearest mutant of the same key that no entry names exactly.
const linesOf = new Map();
for (const k of kept.filter((x) => x.line !== undefined)) {
  const key = keyOf(k.file, k.mutator, k.original, k.replacement);
  linesOf.set(key, [...(linesOf.get(key) ?? []), k.line]);
}
function entryAt(k, line) {
  const exact = `${k}\u0000${line}`;
  if (reasonsAt.has(exact)) return exact;
  if (reasons.has(k)) return null; // an entry without a line names every mutant of its key
  const free = (linesOf.get(k) ?? []).filter((l) => !used.has(`${k}\u0000${l}`));
  if (free.length === 0) return null;
  const nearest = free.reduce((a, b) => (Math.abs(b - line) < Math.abs(a - line) ? b : a));
  return `${k}\u0000${nearest}`;
}

// The files a group's mutate patterns name: plain paths, dir/**/*.ts, and !path exclusions.
function mutatedFiles(patterns) {
  const out = new Set();
  for (const p of patterns.filter((x) => !x.startsWith('!'))) {
    const m = /^(.*)\/\*\*\/\*(\.[a-z]+)$/.exec(p);
    if (!m) {
      out.add(p.split(':')[0]);
      continue;
    }
    for (const f of readdirSync(m[1], { recursive: true })) if (String(f).endsWith(m[2])) out.add(path.posix.join(m[1], String(f)));
  }
  for (const p of patterns.filter((x) => x.startsWith('!'))) out.delete(p.slice(1));
  return [...out].sort();
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const rows = [];
const survivors = [];
let unjustified = 0;

// reports/ is not kept in git, so a fresh clone has no report of a group until it runs again (hours for
// some). A group without a report here keeps the rows and survivors the MUTATION.md on disk holds for it,
// said to be carried over; a run narrowed to some lines keeps the earlier whole-file row and the earlier
// survivors outside those lines the same way.
const CARRIED = ' (carried over from the last MUTATION.md: no report of it on this machine)';
const previous = existsSync('MUTATION.md') ? readFileSync('MUTATION.md', 'utf8').split('\n') : [];
const summaryStart = previous.findIndex((l) => l.startsWith('| group | module |'));
const previousRows = [];
for (let i = summaryStart + 2; summaryStart >= 0 && previous[i]?.startsWith('| '); i++) previousRows.push(previous[i]);
const keptStart = previous.indexOf('## Surviving mutants kept');
const previousSurvivors = [];
for (let i = previous.findIndex((l, k) => k > keptStart && l.startsWith('|---')) + 1; keptStart >= 0 && i > 0 && previous[i]?.startsWith('| '); i++)
  previousSurvivors.push(previous[i]);
const cells = (r) => r.split(' | ').map((c) => c.replace(/^\| /, '').replace(/ \|$/, ''));
/** The file a module cell names (its first `path`). */
const moduleFile = (cell) => /^`([^`]+)`/.exec(cell)?.[1] ?? null;
/** [file, line] of a survivor row's where cell (`file:line`). */
const survivorAt = (r) => {
  const m = /^\| `([^`:]+):(\d+)`/.exec(r);
  return m ? [m[1], Number(m[2])] : [null, 0];
};
function carryRow(r) {
  const c = cells(r);
  if (!c[1].includes('carried over')) c[1] += CARRIED;
  return `| ${c.join(' | ')} |`;
}
function carrySurvivor(r) {
  if (r.includes('**not justified**')) unjustified++;
  survivors.push(r);
}

for (const [g, def] of Object.entries(groups)) {
  const file = path.join('reports/mutation', `${g}.json`);
  if (!existsSync(file)) {
    const files = new Set(mutatedFiles(def.mutate));
    const carried = previousRows.filter((r) => cells(r)[0] === g && !cells(r)[3].includes('not run'));
    if (carried.length === 0) rows.push(`| ${g} | ${def.mutate.map((m) => `\`${m}\``).join(', ')} | | not run | | | |`);
    for (const r of carried) rows.push(carryRow(r));
    for (const r of previousSurvivors) if (files.has(survivorAt(r)[0])) carrySurvivor(r);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  // The same group run over the tests from before this work (a worktree of 9cb81b3^), when kept.
  const baseFile = path.join('reports/baseline', `${g}.json`);
  const baseline = existsSync(baseFile) ? JSON.parse(readFileSync(baseFile, 'utf8')).files : {};
  // Files the group mutates that its report has no mutants of (a run narrowed to other files): their rows and
  // survivors in the MUTATION.md on disk stay, said to be carried over, as for a group without a report.
  for (const name of mutatedFiles(def.mutate)) {
    if (report.files[name]) continue;
    const carried = previousRows.filter((r) => cells(r)[0] === g && moduleFile(cells(r)[1]) === name && !cells(r)[3].includes('not run'));
    if (carried.length === 0) rows.push(`| ${g} | \`${name}\` | | not run | | | |`);
    for (const r of carried) rows.push(carryRow(r));
    for (const r of previousSurvivors) if (survivorAt(r)[0] === name) carrySurvivor(r);
  }
  for (const [name, f] of Object.entries(report.files).sort()) {
    const lines = f.source.split('\n');
    const count = (set) => f.mutants.filter((m) => set.has(m.status)).length;
    const det = count(DETECTED);
    const und = count(UNDETECTED);
    const invalid = f.mutants.filter((m) => m.status === 'CompileError' || m.status === 'RuntimeError').length;
    const score = det + und === 0 ? 100 : (100 * det) / (det + und);
    const b = baseline[name];
    const before = b
      ? (() => {
          const bd = b.mutants.filter((m) => DETECTED.has(m.status)).length;
          const bu = b.mutants.filter((m) => UNDETECTED.has(m.status)).length;
          return `${((100 * bd) / (bd + bu || 1)).toFixed(1)} %`;
        })()
      : '';
    // A run narrowed with --mutate says so: its score is for those lines only.
    const narrowed = (report.config?.mutate ?? []).filter((m) => m.startsWith(`${name}:`)).map((m) => m.slice(name.length + 1));
    // An incremental run narrowed to line ranges keeps the earlier results outside them, so its report is the whole file again.
    const inRanges = (line) =>
      narrowed.some((r) => {
        const [a, b] = r.split('-').map((x) => Number(x.split(':')[0]));
        return line >= a && line <= (b ?? a);
      });
    const whole = f.mutants.some((m) => !inRanges(m.location.start.line));
    const shown = !narrowed.length
      ? `\`${name}\``
      : whole
        ? `\`${name}\`, whole file (lines ${narrowed.join(', ')} rerun)`
        : `\`${name}\` lines ${narrowed.join(', ')} only`;
    // A report over other source than today's says so: its figure is of that code.
    const current = existsSync(name) ? readFileSync(name, 'utf8') : null;
    const changed = current !== f.source ? ' (source changed since this run)' : '';
    if (narrowed.length && !whole) {
      // The earlier whole-file figure stays beside the lines rerun, with its survivors outside them.
      for (const r of previousRows) if (cells(r)[0] === g && moduleFile(cells(r)[1]) === name && !cells(r)[1].includes(' only')) rows.push(carryRow(r));
      for (const r of previousSurvivors) {
        const [at, line] = survivorAt(r);
        if (at === name && !inRanges(line)) carrySurvivor(r);
      }
    }
    rows.push(`| ${g} | ${shown}${changed} | ${before} | ${score.toFixed(1)} % | ${det} | ${und} | ${invalid} |`);
    const byPlace = (a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column;
    // A mutant left out in the source (a `// Stryker disable` comment, for an equivalent one where the module has
    // too few mutants for a kept survivor to leave its score honest) is listed with the comment's reason.
    for (const m of f.mutants.filter((x) => x.status === 'Ignored').sort(byPlace)) {
      const { start, end } = m.location;
      const original = start.line === end.line ? lines[start.line - 1].slice(start.column - 1, end.column - 1) : lines[start.line - 1].slice(start.column - 1);
      const short = (s) => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|').replace(/`/g, "'").slice(0, 70);
      survivors.push(
        `| \`${name}:${start.line}\` | ${m.mutatorName} | \`${short(original)}\` → \`${short(m.replacement ?? '')}\` | left out of the score in the source: ${(m.statusReason || 'no reason given').replace(/\|/g, '\\|')} |`,
      );
    }
    for (const m of f.mutants.filter((x) => UNDETECTED.has(x.status)).sort(byPlace)) {
      const { start, end } = m.location;
      const original =
        start.line === end.line
          ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
          : [lines[start.line - 1].slice(start.column - 1), ...lines.slice(start.line, end.line - 1), lines[end.line - 1].slice(0, end.column - 1)].join('\n');
      const k = keyOf(name, m.mutatorName, original, m.replacement ?? '');
      const at = entryAt(k, start.line);
      const reason = (at && reasonsAt.get(at)) ?? reasons.get(k);
      if (at) used.add(at);
      else if (reason) used.add(k);
      else unjustified++;
      const short = (s) => s.replace(/\s+/g, ' ').replace(/\|/g, '\\|').replace(/`/g, "'").slice(0, 70);
      survivors.push(
        `| \`${name}:${start.line}\` | ${m.mutatorName} | \`${short(original)}\` → \`${short(m.replacement ?? '')}\` | ${m.status === 'NoCoverage' ? 'no coverage: ' : ''}${reason ?? '**not justified**'} |`,
      );
    }
  }
}

// Within a group, by module (stable: a whole-file row stays before the lines rerun), whether carried or from a report.
const groupRank = new Map(Object.keys(groups).map((g, i) => [g, i]));
rows.sort((a, b) => groupRank.get(cells(a)[0]) - groupRank.get(cells(b)[0]) || (moduleFile(cells(a)[1]) ?? '').localeCompare(moduleFile(cells(b)[1]) ?? ''));
const carriedAny = rows.some((r) => r.includes(CARRIED));
const stale = kept.filter(
  (k) =>
    !used.has(
      k.line === undefined ? keyOf(k.file, k.mutator, k.original, k.replacement) : `${keyOf(k.file, k.mutator, k.original, k.replacement)}\u0000${k.line}`,
    ),
);
const timing = Object.keys(minutes).length
  ? `\nLast run (${new Date().toISOString().slice(0, 16)}Z, concurrency ${process.env.STRYKER_CONCURRENCY ?? 2}): ${Object.entries(minutes)
      .map(([g, m]) => `${g} ${m.toFixed(1)} min`)
      .join(', ')}.\n`
  : '';
const md = `# Mutation testing

Generated by \`npm run test:mutation\` (StrykerJS 9.6.1, vitest runner,
TypeScript checker; configs in \`stryker/\`). Score = killed (or timed out) /
(killed + survived + not covered); mutants the TypeScript checker rejects
(\`invalid\`) do not count, nor do those a \`// Stryker disable\` comment leaves out
(listed with the comment's reason below). "before" is the same group over the tests that
existed before issue 19 (run in a worktree of 9cb81b3^). Not part of \`npm test\` or CI.
${timing}
| group | module | before | score | killed | undetected | invalid |
|---|---|---|---|---|---|---|
${rows.join('\n')}

## Surviving mutants kept

Each with the reason it stays (reasons live in \`stryker/kept.json\`).

| where | mutator | mutation | reason |
|---|---|---|---|
${survivors.join('\n') || '| | | none | |'}
${readFileSync('stryker/notes.md', 'utf8')}`;
writeFileSync('MUTATION.md', md);
console.log(
  `MUTATION.md written: ${survivors.length} survivors, ${unjustified} not justified${stale.length && !carriedAny ? `, ${stale.length} stale entries in stryker/kept.json` : ''}`,
);
// --prune: drop the kept entries no survivor of the current reports uses (a mutant since killed, or code since gone).
// Only sound when every group's report is of today's source.
if (args.includes('--prune') && carriedAny) console.log('--prune skipped: some rows are carried over, so their survivors were not read from a report');
else if (args.includes('--prune') && stale.length > 0) {
  const gone = new Set(stale);
  writeFileSync(
    'stryker/kept.json',
    JSON.stringify(
      kept.filter((k) => !gone.has(k)),
      null,
      1,
    ) + '\n',
  );
  console.log(`stryker/kept.json: ${stale.length} stale entries removed`);
}
