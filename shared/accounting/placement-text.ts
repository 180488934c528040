// The report's notes on where model states live beyond the schemes' own sharding: DeepSpeed's offload (host
// memory, the copies between device and host) and its persisted parameters (kept whole, never gathered).
import type { Report, SchemeRow } from './report.js';
import { formatBytes } from './units.js';

export function placementNotes(r: Report): string[] {
  const c = r.config;
  const out: string[] = [];
  const off = c.offload;
  if (off) {
    const what = `--offload optimizer${off.params ? ',params' : ''}${off.dpu ? ', the update delayed a step (--offload-dpu)' : ''}`;
    const both = (t: number, m: number) => `${formatBytes(m)}${m === t ? '' : ` (theory ${formatBytes(t)})`}`;
    const row = (x: SchemeRow) => {
      const o = x.offload!;
      const ms = o.ms ? ` (modeled: copies ${o.ms.pcie.toFixed(1)} ms on the host link, the host's Adam ${o.ms.hostAdam.toFixed(1)} ms)` : '';
      return `${x.title} down ${both(o.pcie.theory.d2h, o.pcie.measured.d2h)}, up ${both(o.pcie.theory.h2d, o.pcie.measured.h2d)}${ms}, on the host ${both(o.host.theory, o.host.measured)}`;
    };
    if (off.hostAdamGparams !== undefined && r.device)
      out.push(`the host's Adam at ${off.hostAdamGparams.toPrecision(3)}e9 parameters/s per rank (${off.hostAdamMeasured ?? 'given: --host-adam-gparams'})`);
    out.push(
      `offload (${what}): the masters and Adam's moments${off.params ? ' and the 16-bit shard' : ''} in host memory; per rank per step, device to host (the reduced gradient shard) and host to device (${off.params ? "each gathered unit's shard" : 'the updated 16-bit shard'}), and what the host holds for the rank, measured (= theory unless said): ${r.rows
        .filter((x) => x.offload)
        .map(row)
        .join('; ')}`,
    );
  }
  if (c.persist)
    out.push(
      `persisted (--persist-threshold ${c.persist}, DeepSpeed's stage3_param_persistence_threshold): in ZeRO-3 and HSDP every tensor of at most ${c.persist} elements is kept whole on every rank, left out of each gather and all-gathered once after the update (ZeRO++'s components gather everything)`,
    );
  return out;
}
