// A raw disk image with an MBR (msdos) partition table, as the Debian
// installer writes on a BIOS machine, for scenarios that need partitions
// (swap by UUID=, LABEL=, PARTUUID=). The layout is the one fdisk(8) and the
// kernel read: disk signature at byte 440, four 16-byte entries at 446, 0x55AA
// at 510. The kernel's PARTUUID for an MBR partition is the signature in hex
// and the partition number ("c0ffee01-03"). No partitioning tool is needed on
// this machine. Usage as a program:
//   node mbr.mjs IMAGE SIGNATURE_HEX PART_MIB...   (each a type-0x82 partition, 1 MiB aligned)
// prints each partition's byte offset and size, one per line.
import fs from 'node:fs';

const SECTOR = 512;
const MIB = 1024 * 1024;

/** Linux swap (fdisk's "82"). */
export const LINUX_SWAP = 0x82;

/**
 * Writes `image` (its size the partitions plus 1 MiB in front) with one
 * primary partition of `mib` MiB per entry, back to back from 1 MiB. Returns
 * each partition's byte offset and size. Pure but for the write.
 */
export function writeMbrImage(image, signature, partsMib, type = LINUX_SWAP) {
  if (partsMib.length === 0 || partsMib.length > 4) throw new Error('an MBR holds 1 to 4 primary partitions');
  if (!/^[0-9a-f]{8}$/.test(signature)) throw new Error(`disk signature must be 8 hex digits: ${signature}`);
  const parts = [];
  let start = MIB;
  for (const mib of partsMib) {
    parts.push({ offset: start, size: mib * MIB });
    start += mib * MIB;
  }
  const mbr = Buffer.alloc(SECTOR);
  mbr.writeUInt32LE(parseInt(signature, 16), 440);
  parts.forEach((p, i) => {
    const e = 446 + 16 * i;
    mbr[e] = 0x00; // not bootable
    // CHS fields: 0xfe 0xff 0xff, as tools write for LBA-only disks.
    mbr.set([0xfe, 0xff, 0xff], e + 1);
    mbr[e + 4] = type;
    mbr.set([0xfe, 0xff, 0xff], e + 5);
    mbr.writeUInt32LE(p.offset / SECTOR, e + 8);
    mbr.writeUInt32LE(p.size / SECTOR, e + 12);
  });
  mbr[510] = 0x55;
  mbr[511] = 0xaa;
  const fd = fs.openSync(image, 'w');
  try {
    fs.ftruncateSync(fd, start);
    fs.writeSync(fd, mbr, 0, SECTOR, 0);
  } finally {
    fs.closeSync(fd);
  }
  return parts;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [image, signature, ...mibs] = process.argv.slice(2);
  if (!image || !signature || mibs.length === 0) {
    process.stderr.write('usage: node mbr.mjs IMAGE SIGNATURE_HEX PART_MIB...\n');
    process.exit(2);
  }
  for (const p of writeMbrImage(image, signature, mibs.map(Number))) process.stdout.write(`${p.offset} ${p.size}\n`);
}
