// The kernel's own count of bytes through a network interface (/sys/class/net/IFACE/statistics): the view
// of the wire that includes TCP/IP headers, retransmissions and everything else the app cannot see.
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';

export interface InterfaceCounters {
  name: string;
  tx: number;
  rx: number;
}

/** The interface that holds `address`, e.g. the local end of a peer connection. */
function interfaceFor(address: string): string | null {
  const plain = address.replace(/^::ffff:/, '');
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (addrs?.some((a) => a.address === plain)) return name;
  }
  return null;
}

/** Counters of interface `name`, or of the interface holding `localAddress` when name is 'auto'.
 *  Returns null where /sys is not readable (not Linux) or no interface matches. */
export function readInterfaceCounters(name: string, localAddress: string | null): InterfaceCounters | null {
  const iface = name === 'auto' ? (localAddress ? interfaceFor(localAddress) : null) : name;
  if (!iface || !/^[\w.@-]+$/.test(iface)) return null;
  try {
    const read = (f: string) => Number(readFileSync(`/sys/class/net/${iface}/statistics/${f}`, 'utf8').trim());
    return { name: iface, tx: read('tx_bytes'), rx: read('rx_bytes') };
  } catch {
    return null;
  }
}
