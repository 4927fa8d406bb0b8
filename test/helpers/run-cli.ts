// The CLI run in process, as a test sees it: exit code and what it printed.
import { main } from '../../src/cli.js';
import { captureIo } from './io.js';

export async function runCli(args: string[], isRoot?: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  const h = captureIo(isRoot);
  const code = await main(args, h.value);
  return { code, stdout: h.stdout(), stderr: h.stderr() };
}
