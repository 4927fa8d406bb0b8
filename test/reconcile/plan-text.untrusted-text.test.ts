// The text plan shows what a host wrote as data: a bidi override (U+202E)
// or an ESC in a unit name, a reason, a path, a note, a finding or a diff
// line appears as an escape, never raw, and a tab stays a tab. Through the
// renderer (a unit name in a plan), and through the CLI on a fixture root
// (an fstab comment, a sysctl.d file's name).
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan } from '../../src/reconcile/plan-text.js';
import { renderApplyResult } from '../../src/reconcile/apply-text.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { BaseSpec, Provider } from '../../src/resources/types.js';
import { main } from '../../src/cli.js';
import { captureIo } from '../helpers/io.js';
import { portFreeSpec } from '../helpers/port-free-spec.js';

const RLO = '\u202E';
const ESC = '\x1b';
// How each shows once escaped, written out by hand.
const RLO_SHOWN = '\\u{202E}';
const ESC_SHOWN = '\\x1b';
const UNIT = `evil${RLO}ecivres${ESC}[2J.service`;
const UNIT_SHOWN = `evil${RLO_SHOWN}ecivres${ESC_SHOWN}[2J.service`;

const raw = (s: string) => s.includes(RLO) || s.includes(ESC);

describe('the text plan escapes host strings', () => {
  const plan: Plan = {
    live: true,
    root: '/',
    resources: [
      {
        name: 'PortFree',
        type: 'PortFree',
        spec: portFreeSpec([10250]) as BaseSpec,
        provider: { notes: () => [`note about ${UNIT}`] } as unknown as Provider,
        observed: null,
        changes: [
          { id: 'stop', action: 'stop', summary: `stop ${UNIT}`, op: null },
          { id: 'p', action: 'operator', summary: `port 10250 held by ${UNIT}`, operator: `ExecStart=/usr/bin/nc -l 10250 ${RLO}#`, op: null },
          {
            id: 'f',
            action: 'update',
            summary: `edit /etc/systemd/system/${UNIT}`,
            file: { path: `/etc/systemd/system/${UNIT}`, before: `[Service]\nExecStart=/bin/x\t${ESC}]0;t\x07\n`, after: '[Service]\nExecStart=/bin/y\n' },
            op: null,
          },
        ],
      },
    ],
  };

  it('unit names, reasons, paths, notes and diff lines: escaped, never raw; a tab kept', () => {
    const text = renderPlan(
      planDocument(plan, { findings: [{ level: 'warning', message: `seen ${UNIT}`, evidence: [`/etc/rc.local:3: ${RLO}x`] }] }),
      paletteFor({ isTTY: false }, {}),
    );
    expect(raw(text)).toBe(false);
    expect(text).toContain(`  - stop ${UNIT_SHOWN}\n`);
    expect(text).toContain(`  1. PortFree: port 10250 held by ${UNIT_SHOWN} [operator action required]\n     ExecStart=/usr/bin/nc -l 10250 ${RLO_SHOWN}#\n`);
    expect(text).toContain(`      --- /etc/systemd/system/${UNIT_SHOWN}\n`);
    expect(text).toContain(`      -ExecStart=/bin/x\t${ESC_SHOWN}]0;t\\x07\n`);
    expect(text).toContain(`  note about ${UNIT_SHOWN}\n`);
    expect(text).toContain(`  warning: seen ${UNIT_SHOWN}\n      /etc/rc.local:3: ${RLO_SHOWN}x\n`);
  });

  it('on a terminal the colours are the only escape sequences', () => {
    const text = renderPlan(planDocument(plan), paletteFor({ isTTY: true }, {}));
    expect(text.includes(RLO)).toBe(false);
    // Every ESC left starts one of the palette's SGR sequences.
    expect(text.replace(/\x1b\[\d+m/g, '').includes(ESC)).toBe(false);
  });

  it("apply's result: a failure's message and a written path escaped", () => {
    const text = renderApplyResult(
      { applied: [], failures: [{ resource: 'PortFree', message: `cannot stop ${UNIT}` }], reports: {} } as never,
      [],
      0,
      paletteFor({ isTTY: false }, {}),
      [`/root/ks/${RLO}x.json`],
    );
    expect(raw(text)).toBe(false);
    expect(text).toContain(`error: PortFree: cannot stop ${UNIT_SHOWN}\n`);
    expect(text).toContain(`wrote /root/ks/${RLO_SHOWN}x.json\n`);
  });
});

describe('through the CLI on a fixture root', () => {
  let work = '';
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('an fstab comment and a sysctl.d file name with U+202E and ESC show escaped in the text plan', async () => {
    work = mkdtempSync(path.join(tmpdir(), 'render-untrusted-'));
    const root = path.join(work, 'root');
    mkdirSync(path.join(root, 'etc/sysctl.d'), { recursive: true });
    mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
    // The comment sits next to the swap line: it is diff context.
    writeFileSync(path.join(root, 'etc/fstab'), `# ${RLO}evil${ESC}[2J\n/swapfile none swap sw 0 0\n`);
    // Read after k8s.conf (byte order), so it decides the key at boot and the plan names it.
    const name = `zz-${RLO}x${ESC}[2J.conf`;
    writeFileSync(path.join(root, 'etc/sysctl.d', name), 'net.ipv4.ip_forward = 0\n');
    const desired = path.join(work, 'd.yaml');
    writeFileSync(
      desired,
      'reports_dir: /root/ks/preflight\nresources:\n  - type: SwapOff\n  - type: SysctlFile\n    file: /etc/sysctl.d/k8s.conf\n    settings:\n      net.ipv4.ip_forward: 1\nfirst_boot: off\n',
    );
    const h = captureIo(true);
    await main(['plan', '-f', desired, '--root', root], h.value);
    const text = h.stdout();
    expect(raw(text)).toBe(false);
    expect(text).toContain(`       # ${RLO_SHOWN}evil${ESC_SHOWN}[2J\n`);
    expect(text).toContain(`/etc/sysctl.d/zz-${RLO_SHOWN}x${ESC_SHOWN}[2J.conf`);
  });
});
