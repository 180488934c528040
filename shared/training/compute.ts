// Where a rank's forward and backward passes run. The scheme hands over one layer's parameters at a time
// (fp32 or bf16) and gets gradients back; activations stay with the compute. Inline runs on the calling thread;
// a worker thread (rank/compute-thread.ts) leaves the event loop free to move ring frames meanwhile,
// which is what lets ZeRO-3 prefetch overlap communication with compute.
import type { GroupParams } from './param-group.js';
import type { ArenaModel } from './arena-model.js';

export interface Compute {
  start(x: Float32Array, rows: number): Promise<void>;
  /** `params`: the layer's frozen prefix and trainable rest (its weight, bias, adapters), fp32 or bf16 bits
   *  (widened inside the compute). */
  forward(layer: number, params: GroupParams): Promise<void>;
  /** The mean loss of this rank's rows; the gradient that starts the backward pass is scaled by
   *  `gradScale` (1/N: the sum over ranks is then the gradient of the global mean loss). */
  loss(labels: Int32Array, gradScale: number): Promise<number>;
  /** Bytes the compute holds besides the model states: its kernel arena, and any staging it shares with
   *  a thread (known once a batch has started). */
  readonly arenaBytes: number;
  /** Of those, the activations the forward pass keeps for the backward pass (known once a batch started). */
  readonly activationBytes: number;
  /** WebAssembly memory the compute holds on another thread, which this thread's counters cannot see. */
  readonly otherThreadBytes: number;
  /** Fills `grad` (the size of the layer's trainable rest) with its gradient. */
  backward(layer: number, params: GroupParams, grad: Float32Array): Promise<void>;
  /** A modeled device's time to quantize or dequantize `values` 16-bit values to `codeBytes` of codes (ZeRO++;
   *  real compute quantizes in the values' own kernels and has none of this). */
  quantize?(values: number, codeBytes: number): Promise<void>;
  /** The same on the stream the gradients' reductions run on (DeepSpeed's reduce_and_partition_stream), beside
   *  the compute: queued behind that stream's own kernels only (qgZ). */
  quantizeOnReduceStream?(values: number, codeBytes: number): Promise<void>;
  /** A modeled device's optimizer time over `params` owned parameters (this thread runs no update for it). */
  optimizer?(params: number, gradBytes: number): Promise<void>;
  /** Offload on a modeled device (schemes/offload.ts): `bytes` copied between device and host on the host link,
   *  queued behind the copies before it; returns when it ends (performance.now() ms), without waiting. */
  copyBehind?(bytes: number): number;
  /** The same, waited for (a copy the step cannot go on without). */
  copy?(bytes: number): Promise<void>;
  /** The host's Adam over `params` parameters, once the copies before it are down; `delayed` (ZeRO-Offload's
   *  DPU): the step goes on meanwhile, and hostIdle() waits for it. */
  hostAdam?(params: number, delayed: boolean): Promise<void>;
  hostIdle?(): Promise<void>;
  /** Modeled milliseconds of those copies and of the host's Adam since last asked. */
  takeOffloadMs?(): { pcie: number; hostAdam: number };
  /** The scheme waited for communication until `at` (performance.now() ms): a modeled device waited too. */
  inputsReady?(at: number): void;
  /** A modeled device's compute time since last asked (ms); absent where compute is real. */
  takeModeledMs?(): number;
  close(): Promise<void>;
}

/** Compute on the calling thread, for any model on a kernel arena (the MLP, the GPT): the model writes each
 *  gradient straight into the caller's array. */
export class InlineCompute implements Compute {
  readonly otherThreadBytes = 0;

  constructor(readonly model: ArenaModel) {}

  async start(x: Float32Array, rows: number): Promise<void> {
    await this.model.ready();
    await this.model.startSliced(x, rows);
  }

  async forward(layer: number, params: GroupParams): Promise<void> {
    this.model.forward(layer, params);
  }

  async loss(labels: Int32Array, gradScale: number): Promise<number> {
    return this.model.loss(labels, gradScale);
  }

  get arenaBytes(): number {
    return this.model.arena.bytes;
  }

  get activationBytes(): number {
    return this.model.activationBytes;
  }

  async backward(layer: number, params: GroupParams, grad: Float32Array): Promise<void> {
    this.model.backward(layer, params, grad);
  }

  async close(): Promise<void> {
    await this.model.close();
  }
}
