// Secrets compared without leaking their contents through timing, and the proof a rank shows its ring peer.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Constant-time equality of two secrets of any length (both are hashed to 32 bytes first). */
export function sameSecret(a: string, b: string): boolean {
  const h = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(h(a), h(b));
}

export function helloProof(ringKey: Uint8Array, runId: string, rank: number): Buffer {
  return createHmac('sha256', ringKey).update(`zerowire-hello|${runId}|${rank}`).digest();
}

export function validProof(ringKey: Uint8Array, runId: string, rank: number, proof: Uint8Array): boolean {
  const want = helloProof(ringKey, runId, rank);
  return proof.byteLength === want.byteLength && timingSafeEqual(want, proof);
}
