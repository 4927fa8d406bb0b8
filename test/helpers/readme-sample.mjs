// The README's sample plan: the fixture host, the command line the README
// shows, and the block as it stands between its markers. Used by
// scripts/usage.mjs (which writes it) and test/readme.test.ts (which checks it).
import path from 'node:path';

export const SAMPLE = {
  begin: '<!-- sample:plan -->\n',
  end: '<!-- /sample:plan -->',
  root: 'test/fixtures/sample-host',
  desired: 'test/fixtures/sample-desired-state.yaml',
  /** The arguments, with absolute paths (the tool prints the root it resolved). */
  args: (repo) => ['plan', '--root', path.join(repo, SAMPLE.root), '-f', path.join(repo, SAMPLE.desired)],
};

/** The region's text for what the plan printed: the command, then its output with the root shortened. */
export function sampleBlock(stdout, repo) {
  const shown = stdout.replaceAll(path.join(repo, SAMPLE.root), SAMPLE.root).replace(/\n+$/, '');
  return `${SAMPLE.begin}\`\`\`console\n$ reconcile plan --root ${SAMPLE.root} -f ${SAMPLE.desired}\n${shown}\n\`\`\`\n`;
}
