// A listening socket that could not be opened, said in one line with what to do about it. The CLI exits
// with BIND_EXIT_CODE for it, so a launcher or a script can tell "pick another port" from a failed run.
export const BIND_EXIT_CODE = 3;

export class BindError extends Error {
  override name = 'BindError';
}

/** Why `what` (e.g. "the ring port") could not listen on host:port, from the system's error. */
export function bindError(err: NodeJS.ErrnoException, what: string, host: string, port: number): BindError {
  const where = `${host}:${port}`;
  switch (err.code) {
    case 'EADDRINUSE':
      return new BindError(`${what} ${where} is already in use (EADDRINUSE): choose another port, or 0 for any free one`);
    case 'EACCES':
      return new BindError(`not permitted to listen on ${where} for ${what} (EACCES): ports below 1024 need root; choose one above 1023`);
    case 'EADDRNOTAVAIL':
      return new BindError(`cannot listen on ${where} for ${what} (EADDRNOTAVAIL): ${host} is not an address of this machine`);
    default:
      return new BindError(`cannot listen on ${where} for ${what}: ${err.message}`);
  }
}
