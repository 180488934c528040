// How many bytes wait in a TCP socket's receive queue, read from the kernel (Linux: ioctl FIONREAD, through
// koffi, the FFI package the products already load for the BLAS). Inline compute holds the event loop for a
// whole unit, so a frame that arrives meanwhile is read only afterwards, and the moment it is read is not the
// moment it crossed the link. The queue's growth across a span in which nothing was read is what arrived then.
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

const FIONREAD = 0x541b; // <asm-generic/ioctls.h>
type Ioctl = (fd: number, request: number, value: number[]) => number;
let ioctl: Ioctl | null | undefined;

function loadIoctl(): Ioctl | null {
  if (ioctl !== undefined) return ioctl;
  ioctl = null;
  if (process.platform !== 'linux') return null;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    ioctl = koffi.load('libc.so.6').func('int ioctl(int fd, unsigned long request, _Out_ int *value)') as Ioctl;
  } catch {
    ioctl = null; // no glibc (musl, another OS): arrivals are then seen only as frames are read
  }
  return ioctl;
}

/** A reader of `socket`'s receive queue in bytes (about 5 µs a call), or null where the kernel cannot be asked:
 *  not Linux, no glibc, or a socket without a descriptor of its own (TLS wraps it). */
export function receiveQueue(socket: Socket): (() => number) | null {
  const fd = (Reflect.get(socket, '_handle') as { fd?: unknown } | undefined)?.fd;
  const call = typeof fd === 'number' && fd >= 0 ? loadIoctl() : null;
  if (!call) return null;
  const out = [0];
  return () => (call(fd as number, FIONREAD, out) === 0 ? out[0] : 0);
}
