// Shared StrykerJS settings; each stryker/<group>.conf.mjs names its group.
// Concurrency 2 at most: the machine is shared. Incremental mode keeps a
// rerun to the mutants whose code or tests changed.
import { groups } from './groups.mjs';

export function config(group) {
  const g = groups[group];
  if (!g) throw new Error(`unknown mutation group ${group}`);
  return {
    $schema: '../node_modules/@stryker-mutator/core/schema/stryker-schema.json',
    testRunner: 'vitest',
    vitest: { configFile: `stryker/vitest/${group}.config.ts`, related: false },
    checkers: ['typescript'],
    tsconfigFile: 'tsconfig.json',
    typescriptChecker: { prioritizePerformanceOverAccuracy: true },
    mutate: g.mutate,
    coverageAnalysis: 'perTest',
    concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
    incremental: process.env.STRYKER_INCREMENTAL !== '0',
    incrementalFile: `reports/mutation/${group}.incremental.json`,
    reporters: ['json', 'clear-text', 'progress'],
    jsonReporter: { fileName: `reports/mutation/${group}.json` },
    clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
    ignorePatterns: ['dist', 'reports', 'test/vm', 'docs', 'contrib', '.ci', 'MUTATION.md'],
    tempDirName: '.stryker-tmp',
    cleanTempDir: true,
    timeoutMS: 20000,
    thresholds: { high: 90, low: 80, break: null },
  };
}
