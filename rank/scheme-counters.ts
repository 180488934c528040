// What the sockets and the kernel counted over a scheme: the ring links' bytes, the interfaces' (with --iface),
// and the coordinator link's, read before and after and differenced.
import type { Collectives } from '../shared/collectives/collectives.js';
import type { SchemeSummary } from '../shared/control/messages.js';
import { readInterfaceCounters, type InterfaceCounters } from '../shared/accounting/iface.js';

/** What of a scheme's run the counters read. */
interface CountedRun {
  coll: Collectives;
  iface?: string;
  controlBytes?: () => number;
}

/** TCP bytes on both peer sockets (handshakes included). */
function socketTotals(colls: Collectives[]): { written: number; read: number } {
  let written = 0;
  let read = 0;
  for (const { ring } of colls)
    for (const link of [ring.next, ring.prev]) {
      const b = link?.socketBytes() ?? { written: 0, read: 0 };
      written += b.written;
      read += b.read;
    }
  return { written, read };
}

/** What the sockets and the kernel have counted so far: the ring links, the interfaces, the coordinator link. */
export interface Counters {
  sock: { written: number; read: number };
  iface: InterfaceCounters | null;
  lo: InterfaceCounters | null;
  control?: number;
}

export function countersNow(run: CountedRun, rings: Collectives[]): Counters {
  return { sock: socketTotals(rings), iface: ifaceCounters(run), lo: loopbackCounters(run), control: run.controlBytes?.() };
}

/** The summary's byte counts over the scheme: the difference of two readings. */
export function countedSince(a: Counters, b: Counters): Pick<SchemeSummary, 'socket' | 'iface' | 'loopback' | 'control'> {
  const diff = (x: InterfaceCounters | null, y: InterfaceCounters | null) => (x && y ? { name: x.name, tx: y.tx - x.tx, rx: y.rx - x.rx } : undefined);
  const iface = diff(a.iface, b.iface);
  const loopback = a.lo?.name === a.iface?.name ? undefined : diff(a.lo, b.lo);
  return {
    socket: { sent: b.sock.written - a.sock.written, recv: b.sock.read - a.sock.read },
    ...(iface ? { iface } : {}),
    ...(loopback ? { loopback } : {}),
    ...(a.control !== undefined && b.control !== undefined ? { control: { sent: b.control - a.control } } : {}),
  };
}

/** With --iface, also the host's loopback: the bytes between ranks of one host (and nothing that left it). */
function loopbackCounters(run: CountedRun): InterfaceCounters | null {
  return run.iface ? readInterfaceCounters('lo', null) : null;
}

function ifaceCounters(run: CountedRun): InterfaceCounters | null {
  if (!run.iface) return null;
  return readInterfaceCounters(run.iface, run.coll.ring.next?.localAddress ?? null);
}
