// The TCP payloads in a pcap file as tcpdump writes it (Ethernet, IPv4): what an eavesdropper on the link
// would have read.
import { readFileSync } from 'node:fs';

export function tcpPayloads(file: string): Buffer[] {
  const b = readFileSync(file);
  const magic = b.readUInt32LE(0);
  if (magic !== 0xa1b2c3d4 && magic !== 0xa1b23c4d) throw new Error(`${file}: not a little-endian pcap file`);
  if (b.readUInt32LE(20) !== 1) throw new Error(`${file}: link type ${b.readUInt32LE(20)}, expected Ethernet (1)`);
  const out: Buffer[] = [];
  for (let at = 24; at + 16 <= b.length;) {
    const captured = b.readUInt32LE(at + 8);
    const pkt = b.subarray(at + 16, at + 16 + captured);
    at += 16 + captured;
    if (pkt.length < 14 || pkt.readUInt16BE(12) !== 0x0800) continue; // IPv4 only
    const ip = pkt.subarray(14);
    if (ip[9] !== 6) continue; // TCP
    const tcp = ip.subarray((ip[0] & 0x0f) * 4);
    const payload = tcp.subarray((tcp[12] >> 4) * 4);
    if (payload.length) out.push(payload);
  }
  return out;
}

/** How many times `needle` occurs in the payloads (each searched on its own). */
export function occurrences(payloads: Buffer[], needle: Buffer): number {
  let n = 0;
  for (const p of payloads) for (let i = p.indexOf(needle); i >= 0; i = p.indexOf(needle, i + 1)) n++;
  return n;
}
