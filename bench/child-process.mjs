// Starting a measurement in a child Node process and reading its answer: the last line it prints,
// as JSON. A child that dies, prints no JSON or runs past its time answers { error } instead.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** node [flags] args in the repository root → the child's JSON, plus wallMs. */
export function runChild(args, timeoutMs, flags = []) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [...flags, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').pop();
      let json = null;
      try {
        json = JSON.parse(last);
      } catch {
        /* no JSON */
      }
      if (!json) {
        json = {
          error:
            signal === 'SIGKILL'
              ? `timed out after ${(timeoutMs / 1000).toFixed(0)} s`
              : `child exited with ${code ?? signal}: ${(stderr.trim().split('\n').pop() || '').slice(0, 200)}`,
        };
      }
      json.wallMs = performance.now() - t0;
      resolve(json);
    });
  });
}

/** Prints a child's answer as the last line of its output, where runChild reads it. */
export const answer = (o) => {
  process.stdout.write('\n' + JSON.stringify(o) + '\n');
};
