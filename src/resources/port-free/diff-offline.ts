// PortFree's diff on an image: disable (and mask) the units that would take a
// wanted port at boot; candidates are operator lines or first-boot waits.
import type { PortFreeSpec } from './spec.js';
import type { Change } from '../types.js';
import { protectionOf } from '../../ports/protection.js';
import type { OfflinePortsObserved } from '../../ports/observed.js';
import type { UnitDirective } from '../../systemd/unit-file.js';
import type { UnitEnablement } from '../../systemd/unit-links.js';
import { SYSTEMD_SYSTEM_ETC } from '../../systemd/unit-dirs.js';
import { operatorChange, type PortFreeOp } from './ops.js';
import { setAsidePath } from '../../systemd/unit-mask.js';

function fileLine(d: UnitDirective): string {
  return `${d.file}:${d.line}`;
}

/** One image's diff: the changes so far, and the units already decided. */
interface OfflineDiff {
  spec: PortFreeSpec;
  o: OfflinePortsObserved;
  changes: Change<PortFreeOp>[];
  handled: Set<string>;
}

export function diffOffline(spec: PortFreeSpec, o: OfflinePortsObserved, firstBoot = false): Change<PortFreeOp>[] {
  const d: OfflineDiff = { spec, o, changes: [], handled: new Set() };
  disableSocketUnits(d);
  for (const u of o.disableUnits) {
    if (!u.exists && u.enablement.links.length === 0) continue; // nothing in the image to disable
    disableUnit(d, u.unit, u.enablement, 'is listed in disable_units');
  }
  pushCandidates(d, firstBoot);
  return d.changes;
}

/** Enabled by its own links, or started at boot through another unit (Wants= elsewhere, a trigger). */
function startsAtBoot(o: OfflinePortsObserved, unit: string, en: UnitEnablement): boolean {
  return en.links.length + en.vendorLinks.length > 0 || o.reachNow[unit] !== undefined;
}

function disableSocketUnits(d: OfflineDiff): void {
  const { o } = d;
  for (const s of o.sockets) {
    const listen = s.socket.listens
      .filter((l) => s.ports.includes(l.port))
      .map((l) => `ListenStream=${l.directive.value} (${fileLine(l.directive)})`)
      .join(', ');
    if (!startsAtBoot(o, s.socket.name, s.enablement)) continue; // nothing starts it at boot
    disableUnit(d, s.socket.name, s.enablement, `would listen on ${s.ports.join(', ')} at boot: ${listen}`);
    // The service too, when it is enabled on its own or something besides the socket still starts it.
    const se = s.serviceEnablement;
    if (se && (se.links.length + se.vendorLinks.length > 0 || (o.comeback[s.socket.service]?.reasons.length ?? 0) > 0)) {
      disableUnit(d, s.socket.service, se, `is the service of ${s.socket.name}`);
    }
  }
}

function disableUnit(d: OfflineDiff, unit: string, en: UnitEnablement, why: string): void {
  if (d.handled.has(unit)) return;
  d.handled.add(unit);
  const prot = protectionOf(unit, d.spec, null);
  if (prot !== null && en.links.length + en.vendorLinks.length > 0) {
    d.changes.push(operatorChange(`disable-${unit}`, `${unit} ${why}`, `${prot}; it is never disabled automatically`, { port: null, unit, pid: null }));
    return;
  }
  // Exactly what `systemctl disable UNIT` removes, Also= units' links included.
  const links = [...en.links, ...en.alsoLinks];
  if (links.length > 0) {
    d.changes.push({
      id: `disable-${unit}`,
      action: 'disable',
      summary: `disable ${unit} in the image: ${why}; remove ${links.join(', ')}`,
      op: { kind: 'disable-links', unit, links },
    });
  }
  if (en.masked || prot !== null) return;
  maskIfItComesBack(d, unit, en, why);
}

/** What would still start it at boot once its own links are gone (a Wants= elsewhere, a vendor link, a trigger). */
function maskIfItComesBack(d: OfflineDiff, unit: string, en: UnitEnablement, why: string): void {
  const { spec, o } = d;
  const cb = o.comeback[unit];
  const known = cb !== undefined && cb.unknown === null;
  const reasons = known ? cb.reasons : [];
  // Without a graph to ask, a vendor link is the one way back the links alone tell.
  const vendorOnly = !known && en.vendorLinks.length > 0;
  const stillStarts = reasons.length > 0 || vendorOnly;
  if (spec.mask === true || (spec.mask === 'auto' && stillStarts)) {
    const because =
      spec.mask === 'auto'
        ? `: ${reasons.length > 0 ? reasons.join('; ') : `it is enabled by vendor links (${en.vendorLinks.join(', ')}) that disable cannot remove`}`
        : '';
    // A unit file in /etc holds the mask link's place (systemctl mask refuses): it is set aside, then masked.
    const own = o.etcFiles[unit] ?? null;
    const aside = own !== null ? `; its unit file ${own} is moved to ${setAsidePath(own)}, out of the unit search path (--rollback puts it back)` : '';
    d.changes.push({
      id: `mask-${unit}`,
      action: 'mask',
      summary: `mask ${unit} in the image (link ${SYSTEMD_SYSTEM_ETC}/${unit} to /dev/null)${aside}${because}`,
      op: { kind: 'mask-link', unit },
    });
  } else if (reasons.length > 0) {
    d.changes.push(
      operatorChange(
        `comeback-${unit}`,
        `${unit} ${why}`,
        `${reasons.join('; ')}: disabling it is not enough; set mask: auto (or true) to mask it, or remove that dependency`,
        { port: null, unit, pid: null },
      ),
    );
  } else if (vendorOnly) {
    d.changes.push(
      operatorChange(
        `disable-${unit}-vendor`,
        `${unit} ${why}`,
        `it is enabled by vendor links (${en.vendorLinks.join(', ')}) that disable cannot remove; set mask: true`,
        { port: null, unit, pid: null },
      ),
    );
  }
}

function pushCandidates(d: OfflineDiff, firstBoot: boolean): void {
  const { spec, o } = d;
  const seen = new Set<string>();
  for (const c of o.candidates) {
    const { unit, port, evidence } = c.candidate;
    if (d.handled.has(unit) || seen.has(unit)) continue;
    // Listing a candidate as protected is how an operator says "it does not bind the port".
    if (protectionOf(unit, spec, null) !== null) continue;
    if (!startsAtBoot(o, unit, c.enablement) || c.enablement.masked) continue;
    seen.add(unit);
    if (firstBoot) {
      // Whether it really binds the port is a run-time truth: the first boot waits for it and frees the port if it does.
      d.changes.push({
        id: `candidate-${unit}`,
        action: 'deferred',
        summary: `at first boot: wait (up to ${spec.timeout_seconds} s) for ${unit}, which may listen on ${port} (${evidence.key}= at ${fileLine(evidence)} mentions ${port}); stop and disable it if it does`,
        op: { kind: 'first-boot-wait', port, unit },
      });
      continue;
    }
    d.changes.push(
      operatorChange(
        `candidate-${unit}`,
        `${unit} may listen on ${port} at boot (${evidence.key}= at ${fileLine(evidence)} mentions ${port})`,
        `a service that names the port is only a candidate; add ${unit} to disable_units to disable it in the image, or to protected_units if it does not bind the port`,
        { port, unit, pid: null },
      ),
    );
  }
}
