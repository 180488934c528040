// PyTorch as a reference: /usr/bin/python3 with torch. A test whose reference is missing is skipped with the
// reason, never passed (a pass would claim a check that did not run); under CI it fails, since .ci/run
// installs the reference.
import { spawnSync } from 'node:child_process';
import type { TestContext } from 'vitest';
import { IN_CI } from './docker.js';

const PYTHON = '/usr/bin/python3';
export const TORCH = spawnSync(PYTHON, ['-c', 'import torch'], { timeout: 60_000 }).status === 0;

/** Go on with `what` (PyTorch's side of this test) only where torch is: else skip this test, saying why. */
export function requireTorch(ctx: TestContext, what: string): void {
  if (TORCH) return;
  const why = `PyTorch missing: ${what} needs ${PYTHON} with torch (apt-get install python3-torch)`;
  if (IN_CI) throw new Error(`CI=true but ${why}; .ci/run installs it`);
  ctx.skip(why);
}
