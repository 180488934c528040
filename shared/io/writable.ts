// Where a run will write, checked before the first step, so a read-only or missing place fails at once
// with the system's own reason, not after the whole run (or as a puzzling "ENOENT ... mkdir").
import { randomBytes } from 'node:crypto';
import { mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

class NotWritableError extends Error {
  override name = 'NotWritableError';
}

async function probe(dir: string, what: string): Promise<void> {
  const file = join(dir, `.zerowire-probe-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(file, '');
  } catch (err) {
    throw new NotWritableError(`${what}: cannot write in ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  await unlink(file).catch(() => undefined);
}

/** A folder the run will fill (made if missing): it must become a writable folder. */
export async function checkWritableDir(dir: string, what: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    throw new NotWritableError(`${what}: cannot make the folder ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  await probe(dir, what);
}

/** A file the run will write at the end: its folder must exist and be writable. */
export async function checkWritableFile(path: string, what: string): Promise<void> {
  await probe(dirname(path), what);
}
