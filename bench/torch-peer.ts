// PyTorch as an honest peer: its BLAS pinned to the same thread count as ours (torch.set_num_threads does
// not bind OpenBLAS's own pthread pool, so an unpinned "one-thread" peer silently uses every core), and
// refused as a peer when the BLAS it loaded is the reference one (about 5 GFLOP/s: no peer at all).
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

export interface TorchPeer {
  env: NodeJS.ProcessEnv; // run every peer process with this
  blas: string; // the libraries it loaded
  refused: string | null; // why it is no peer here
}

const PROBE = `
import os, torch
torch.ones(64, 64) @ torch.ones(64, 64)
libs = sorted({l.split()[-1] for l in open('/proc/self/maps') if 'blas' in l.lower() and '/' in l})
print(';'.join(libs))
`;

/** The peer for `threads` threads, or null when python3 with torch is missing. */
export function torchPeer(threads: number): TorchPeer | null {
  const env = { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads), MKL_NUM_THREADS: String(threads) };
  const r = spawnSync('/usr/bin/python3', ['-c', PROBE], { encoding: 'utf8', env, timeout: 120_000 });
  if (r.status !== 0) return null;
  const libs = r.stdout.trim().split(';').filter(Boolean);
  const real = libs.map((p) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  });
  const optimized = real.some((p) => /openblas|mkl|blis/i.test(p));
  const blas = real.length ? real.join(', ') : 'none found';
  const refused = optimized
    ? null
    : `PyTorch here runs on a reference BLAS (${blas}): no peer (apt-get install libopenblas0-pthread, which torch picks up through the libblas.so.3 alternative)`;
  return { env, blas, refused };
}

/** The line a bench prints about its peer. */
export function describePeer(peer: TorchPeer | null, threads: number): string {
  if (!peer) return 'PyTorch: missing (needs /usr/bin/python3 with torch: apt-get install python3-torch libopenblas0-pthread)';
  if (peer.refused) return peer.refused;
  return `PyTorch peer: BLAS ${peer.blas}, pinned to ${threads} thread(s) (OPENBLAS_NUM_THREADS=${threads})`;
}
