// Whether a file holds a Linux swap area, as libblkid decides it
// (libblkid/src/superblocks/swap.c): "SWAPSPACE2" in the last 10 bytes of
// the first page, for any page size from 4 KiB to 64 KiB, and a version 1
// header at byte 1024 with a non-zero last page. Pure: bytes in, verdict out.

export const SWAP_MAGIC = 'SWAPSPACE2';
export const PAGE_SIZES = [0x1000, 0x2000, 0x4000, 0x8000, 0x10000] as const;
/** Bytes to read from the start of a file to decide. */
export const SIGNATURE_SPAN = 0x10000;

export type SwapSignature = { swap: true; pageSize: number } | { swap: false; reason: string };

/** `head`: the first SIGNATURE_SPAN bytes of the file (fewer for a short file). */
export function swapSignature(head: Buffer): SwapSignature {
  for (const page of PAGE_SIZES) {
    if (head.length < page) break;
    if (head.toString('latin1', page - 10, page) !== SWAP_MAGIC) continue;
    const version = head.readUInt32LE(1024);
    const lastPage = head.readUInt32LE(1028);
    if (version !== 1 || lastPage === 0) {
      return { swap: false, reason: `has ${SWAP_MAGIC} at byte ${page - 10} but no valid swap header (version ${version}, last page ${lastPage})` };
    }
    return { swap: true, pageSize: page };
  }
  return { swap: false, reason: `has no swap signature (${SWAP_MAGIC} at byte pagesize-10 for page sizes 4 to 64 KiB)` };
}
