// Offload in a predicted step (step-prediction.ts), as a modeled run schedules it (whatif/modeled-compute.ts,
// training/schemes/offload.ts): one host link (each direction alone, at the device's hostLinkGBps) that carries
// each reduced gradient shard down as soon as it is reduced, behind the backward pass; the host's Adam, once
// they are down, at its rate for this rank; then the updated 16-bit shard up before the next step can use it.
// With offload_param, each gather's shard goes up first instead. With DPU the host's Adam runs behind the next
// step: the step is the longer of the device's side and the host's Adam.
import type { RunConfig } from '../control/run-config.js';

export class OffloadQueue {
  private linkEnd = 0;
  /** Milliseconds of copies and of the host's Adam. */
  pcieMs = 0;
  hostAdamMs = 0;

  /** `params`: this scheme's 16-bit shard is the host's too (offload_param on ZeRO-3). */
  constructor(
    private readonly off: NonNullable<RunConfig['offload']>,
    private readonly linkGBps: number,
    readonly params: boolean,
  ) {}

  /** A gather's shard of `bytes` from `at`: up first where the parameters are the host's; when it can start. */
  up(at: number, bytes: number): number {
    return this.params ? this.copy(at, bytes) : at;
  }

  /** After the backward pass (at `now`): the reduced shard of `shard` parameters (`b` bytes each) down here where
   *  it was not sent behind the backward pass (`once`: ZeRO-1's, reduced at the end), the update, the shard up.
   *  Returns when the step ends. */
  finish(now: number, shard: number, b: number, once: boolean): number {
    if (once) this.copy(now, shard * b);
    return this.update(now, shard, this.params ? 0 : shard * b);
  }

  /** `bytes` over the host link from `at` on; when they are across. */
  copy(at: number, bytes: number): number {
    const ms = bytes / (this.linkGBps * 1e6);
    this.pcieMs += ms;
    this.linkEnd = Math.max(this.linkEnd, at) + ms;
    return this.linkEnd;
  }

  /** The update from `now` (the backward pass and its reductions done): the host's Adam over `params` once the
   *  gradients are down, then (`up` bytes: the updated shard, 0 with offload_param) the parameters up. Returns
   *  when the step ends. */
  private update(now: number, params: number, up: number): number {
    this.hostAdamMs = params / (this.off.hostAdamGparams! * 1e6);
    if (this.off.dpu) return Math.max(this.copy(now, up), this.hostAdamMs); // the previous update's parameters up; Adam behind
    const done = Math.max(now, this.linkEnd) + this.hostAdamMs;
    return up > 0 ? this.copy(done, up) : done;
  }
}
