// The program that is running, when it is the single-file bundle: the bake
// copies exactly these bytes into an image, so the first boot runs the same
// build that planned it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bytesOf, type ByteString } from '../../bytes.js';

export interface RunningBundle {
  /** Where it runs from on the build machine (for messages). */
  path: string;
  bytes: ByteString;
}

/**
 * In the bundle, import.meta.url is the bundle file itself (dist/reconcile.mjs,
 * or /usr/libexec/k8s-host-reconcile/reconcile.mjs from the .deb); run from the TypeScript sources it is
 * a .ts module, and there is no single file to copy.
 */
export function runningBundle(url: string = import.meta.url): RunningBundle | null {
  if (!url.startsWith('file:')) return null;
  const file = fileURLToPath(url);
  if (file.endsWith('.ts')) return null;
  try {
    const buf = readFileSync(file);
    if (!buf.subarray(0, 2).equals(Buffer.from('#!'))) return null;
    return { path: file, bytes: bytesOf(buf) };
  } catch {
    return null;
  }
}
