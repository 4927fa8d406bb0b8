// A fleet of any size from the small fleet's real documents
// (fleet-documents.ts): host i gets the document of FLEET[i % FLEET.length],
// so what each host implies (its verdict, its causes) is known from its kind
// alone. A few hosts get hostile names (markup, quotes, a newline, a bidi
// override): the report reads host names from directory names, which a
// fetch directory may hold.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FLEET, type FleetHost } from './fleet-documents.js';

export const HOSTILE_NAMES = ['<script>alert(1)', '<img src=x onerror="window.pwned=1">', `q"u'o&te`, 'rtl-\u202Egnp.exe', 'line\nbreak'];

export interface ScaledHost {
  name: string;
  kind: FleetHost;
}

export function scaledHosts(n: number): ScaledHost[] {
  return Array.from({ length: n }, (_, i) => ({
    name: i < HOSTILE_NAMES.length ? HOSTILE_NAMES[i]! : `rack-${String(Math.floor(i / 40)).padStart(3, '0')}-node-${String(i).padStart(5, '0')}`,
    kind: FLEET[i % FLEET.length]!,
  }));
}

/** Writes dir/<host>/reconcile.json for each host from `fetched` (makeFleetDocuments' output). */
export function writeScaledFleet(fetched: string, dir: string, hosts: ScaledHost[]): string {
  const texts = new Map(FLEET.map((h) => [h.name, readFileSync(path.join(fetched, h.name, 'reconcile.json'), 'utf8')]));
  for (const h of hosts) {
    mkdirSync(path.join(dir, h.name), { recursive: true });
    writeFileSync(path.join(dir, h.name, 'reconcile.json'), texts.get(h.kind.name)!);
  }
  return dir;
}
