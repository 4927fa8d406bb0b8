// PreviousCluster's change operations: what apply does for each change.

export type PreviousClusterOp =
  /** Live: systemctl stop, journaled (the rollback starts it again). */
  | { kind: 'stop'; unit: string }
  /** Live: systemctl disable, journaled with the links it removed. */
  | { kind: 'disable'; unit: string }
  /** Offline: the links `systemctl --root disable` removes, through the door. */
  | { kind: 'disable-links'; unit: string; links: string[] }
  /** door.moveAside; `unitFile`: a unit's file or drop-ins, after which a live manager reloads. */
  | { kind: 'aside'; path: string; unitFile: boolean }
  | { kind: 'operator' };

/** 1536 -> "1.5 KiB": the plan's sizes, with the exact byte count beside them where it matters. */
export function humanBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}
