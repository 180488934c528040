// Where a run will write, checked before the first step, so a read-only or missing place fails at once
// with the system's own reason, not after the whole run (or as a puzzling "ENOENT ... mkdir").
import { randomBytes } from 'node:crypto';
import { mkdir, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
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

/** Why nothing can be made under `dir`, asked of the nearest folder that exists: a recursive mkdir on a
 *  read-only file system says ENOENT (the parent it could not make), where the reason is EROFS or EACCES. */
async function reasonUnder(dir: string): Promise<string | undefined> {
  let at = dir;
  while (dirname(at) !== at && !(await stat(at).catch(() => null))) at = dirname(at);
  const file = join(at, `.zerowire-probe-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(file);
    await rmdir(file);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

/** A folder the run will fill (made if missing): it must become a writable folder. */
export async function checkWritableDir(dir: string, what: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = (code === 'ENOENT' ? await reasonUnder(dir) : undefined) ?? code ?? (err as Error).message;
    throw new NotWritableError(`${what}: cannot make the folder ${dir} (${reason})`);
  }
  await probe(dir, what);
}

/** A file the run will write at the end: not a folder, and its folder must exist and be writable. */
export async function checkWritableFile(path: string, what: string): Promise<void> {
  const existing = await stat(path).catch(() => null);
  if (existing?.isDirectory())
    throw new NotWritableError(`${what}: ${path} is a folder; give a file name (e.g. ${join(path, what === '--html' ? 'report.html' : 'report.json')})`);
  await probe(dirname(path), what);
}
