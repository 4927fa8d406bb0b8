// Small process helpers for the harness: argument arrays only, output streamed
// with a prefix so a long run shows progress.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

export function say(msg) {
  process.stderr.write(`[vm] ${msg}\n`);
}

export class CommandError extends Error {
  constructor(cmd, args, detail) {
    super(`${cmd} ${args.join(' ')}: ${detail}`);
    this.name = 'CommandError';
  }
}

// Runs cmd with args; resolves with {stdout, stderr} on exit 0, rejects
// otherwise. With `prefix`, stderr/stdout lines are echoed to our stderr.
export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
    let stdout = '';
    let stderr = '';
    const echo = (stream, sink) => {
      stream.setEncoding('utf8');
      stream.on('data', sink);
      if (opts.prefix) {
        readline.createInterface({ input: stream }).on('line', (line) => process.stderr.write(`[${opts.prefix}] ${line}\n`));
      }
    };
    echo(child.stdout, (s) => { stdout += s; });
    echo(child.stderr, (s) => { stderr += s; });
    let timer;
    if (opts.timeout) {
      timer = setTimeout(() => child.kill('SIGKILL'), opts.timeout);
    }
    child.on('error', (e) => { clearTimeout(timer); reject(new CommandError(cmd, args, e.message)); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ stdout, stderr });
      else reject(new CommandError(cmd, args, `exit ${code}${signal ? ` signal ${signal}` : ''}\n${stderr.split('\n').slice(-20).join('\n')}`));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/**
 * Builds a cached file once even when several processes want it at the same
 * time (CI builds the root file systems in the background while the unit
 * tests run; the VM suite and the boot farm then wait for that build instead
 * of starting their own): `TARGET.lock` holds the builder's pid; a lock whose
 * process is gone is taken over. Resolves with `target` once it exists.
 */
export async function buildOnce(target, build, tell = say) {
  const lock = `${target}.lock`;
  let told = false;
  for (;;) {
    if (fs.existsSync(target)) return target;
    let fd;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let pid = NaN;
      try {
        pid = Number(fs.readFileSync(lock, 'utf8'));
      } catch {
        continue;
      }
      // An empty lock is being written; a dead owner's lock is stale.
      if (pid > 0 && !alive(pid)) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (!told) tell(`waiting for ${pid > 0 ? `pid ${pid}` : 'another run'} building ${target}`);
      told = true;
      await sleep(2000);
      continue;
    }
    try {
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      if (!fs.existsSync(target)) await build();
      return target;
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}
