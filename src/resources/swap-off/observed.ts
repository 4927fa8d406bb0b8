// What SwapOff observes: the swap active now and every source that turns it on at boot.
import type { ActiveSwap } from '../../swap/proc-swaps.js';
import type { FstabEntry } from '../../swap/fstab.js';
import type { SwapUnit } from '../../swap/units.js';
import type { ZramDevice } from '../../swap/zram.js';

export interface SwapObserved {
  live: boolean;
  /** /proc/swaps; null offline (an unbooted image has no active swap). */
  active: ActiveSwap[] | null;
  /** SwapTotal of /proc/meminfo in kB; null offline. */
  swapTotalKb: number | null;
  /** MemTotal of the same reading, for facts.json's memtotal_mb; null offline or when the kernel prints none. */
  memTotalKb: number | null;
  fstab: {
    path: string;
    /** null: the image has no fstab. */
    content: string | null;
    /** Active (uncommented) swap entries. */
    swap: FstabEntry[];
    /** Swap lines an earlier run commented out, still naming their device. */
    disabled: FstabEntry[];
  };
  units: SwapUnit[];
  /** Swap units and swap services the unit graph holds (what was searched); optional for a hand-made observation. */
  unitsSearched?: number;
  /** Why the unit graph cannot say what starts at boot, or null. */
  graphUnknown?: string | null;
  /**
   * Live: each active swap and the boot sources read here that turn it on
   * (fstab lines, units, zram-generator sections), named; the boot scripts are
   * matched in the diff, where their scan is.
   */
  origins?: SwapOrigin[];
  zram: ZramDevice[];
  swapTargetMasked: boolean;
  /**
   * Files remove_swap_files may delete: named as swap (fstab, our commented
   * lines, a .swap unit, /proc/swaps), a regular file inside the root with one
   * link, and carrying the swap signature.
   */
  swapFiles: string[];
  /** Files named as swap that are none of that, with the reason: never deleted. */
  refusedSwapFiles?: RefusedSwapFile[];
}

export interface RefusedSwapFile {
  path: string;
  /** Where it is named as swap, e.g. "/etc/fstab:7" or "swapfile.swap". */
  source: string;
  reason: string;
}

export interface SwapOrigin {
  /** As /proc/swaps names it. */
  filename: string;
  /** e.g. "/etc/fstab:4", "extra.swap", "zramswap.service", "zram-generator: /etc/systemd/zram-generator.conf [zram0]". */
  by: string[];
  /** Live, for one nothing read here explains: what the running manager says of the .swap unit it made for it. */
  manager?: ManagerSwapUnit;
}

export interface ManagerSwapUnit {
  unit: string;
  /** FragmentPath: empty when systemd knows the swap only from /proc/swaps (a swapon outside any unit). */
  fragment: string | null;
  /** SourcePath: the file a generator made the unit from (/etc/fstab). */
  source: string | null;
  /** WantedBy= and RequiredBy= of the running manager. */
  pulledBy: string[];
}
