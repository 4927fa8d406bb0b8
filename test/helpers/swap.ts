// Real swap areas for fixtures, made by util-linux's mkswap (never our code):
// a regular file in a temporary tree gets a swap header, nothing is enabled.
import { chmodSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export function makeSwapFile(file: string, kib = 64): void {
  writeFileSync(file, Buffer.alloc(kib * 1024));
  chmodSync(file, 0o600);
  execFileSync('mkswap', [file], { stdio: 'ignore' });
}
