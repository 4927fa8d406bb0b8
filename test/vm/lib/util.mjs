// Small process helpers for the harness: argument arrays only, output streamed
// with a prefix so a long run shows progress.
import { spawn } from 'node:child_process';
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
