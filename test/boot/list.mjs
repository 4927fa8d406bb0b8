#!/usr/bin/env node
// Prints the catalogue as a Markdown table (test/boot/README.md has it between its markers).
import { CATALOGUE } from './catalogue/index.mjs';

const rows = CATALOGUE.map((e) => `| \`${e.id}\` | ${e.tier}${e.tier === 'qemu' ? ` (scenario \`${e.scenario}\`)` : ''} | ${e.holds ?? (e.port ? 'port' : e.tier === 'qemu' ? 'swap/module' : 'sysctl')} | ${e.kept ? 'yes' : 'no: a person decides'} | ${e.wild.replace(/\|/g, '\\|')} |`);
process.stdout.write(['| entry | tier | holds | plan must keep it | seen in the wild |', '|---|---|---|---|---|', ...rows, ''].join('\n'));
