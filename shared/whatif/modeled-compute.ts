// Compute on a modeled GPU (--compute model:PRESET): each layer's forward and backward take the time the cost
// model gives them, and nothing else happens. The wait is on the clock (time/clock.ts): a timer on a rank, so the event loop keeps moving ring frames
// meanwhile, as a GPU leaves the NIC running. No parameters, activations or gradients exist: the scheme's
// bands are extents (tensor/extent.ts), and the loss is not computed (NaN).
import { now, sleep } from '../time/clock.js';
import type { GroupParams } from '../training/param-group.js';
import type { Compute } from '../training/compute.js';
import { addWork, type GpuCost, type Work } from './gpu-cost.js';
import { activationBytes, layerWork, optimizerWork, quantizeWork, recomputes, type GpuModel } from './model-passes.js';

/**
 * The modeled device's timeline (now() ms): work starts when the work before it ends or when its
 * inputs arrived, whichever is later, as kernels queued behind a stream's wait do. This thread's own lateness
 * (a timer's overshoot, the ring's frames handled between units) is the emulation's, not the device's: the
 * queue does not wait for it.
 */
export class DeviceQueue {
  private end = 0; // when the device finishes what it was given
  private readyAt = 0; // when the inputs of the next work arrived: a batch, a gathered unit, reduced gradients

  inputsReady(at: number): void {
    this.readyAt = Math.max(this.readyAt, at);
  }

  /** Queue `ms` of work; returns when it ends. */
  run(ms: number): number {
    this.end = Math.max(this.end, this.readyAt) + ms;
    return this.end;
  }
}

interface PassTimes {
  forward: number[]; // ms per layer
  backward: number[];
}

/** Offload on the modeled device: its host link (one direction) and the host's Adam rate for this rank. */
export interface HostSide {
  linkGBps: number;
  adamGparams: number;
}

export class ModeledCompute implements Compute {
  private rows = 0;
  private linkEnd = 0; // when the host link finishes the copies given to it
  private hostEnd = 0; // when the host's Adam finishes
  private readonly reduceStream = new DeviceQueue(); // qgZ's (de)quantization, beside the compute's queue
  /** Modeled milliseconds of copies and of the host's Adam since the last takeOffloadMs(). */
  private offloadMs = { pcie: 0, hostAdam: 0 };
  private times: PassTimes = { forward: [], backward: [] };
  /** Modeled milliseconds waited since the last take(): what the report calls modeled compute. */
  private waited = 0;
  private readonly queue = new DeviceQueue();
  activationBytes = 0;
  readonly arenaBytes = 0;
  readonly otherThreadBytes = 0;

  constructor(
    readonly model: GpuModel,
    readonly cost: GpuCost,
    readonly recompute = false,
    readonly host: HostSide | null = null,
  ) {}

  copyBehind(bytes: number): number {
    const ms = bytes / (this.host!.linkGBps * 1e6);
    this.offloadMs.pcie += ms;
    this.linkEnd = Math.max(this.linkEnd, now()) + ms;
    return this.linkEnd;
  }

  async copy(bytes: number): Promise<void> {
    const end = this.copyBehind(bytes);
    this.queue.inputsReady(end); // what the device does next needs it
    await sleep(end - now());
  }

  async hostAdam(params: number, delayed: boolean): Promise<void> {
    await sleep(this.linkEnd - now()); // the gradients are down
    const ms = params / (this.host!.adamGparams * 1e6);
    this.offloadMs.hostAdam += ms;
    this.hostEnd = now() + ms;
    if (!delayed) await sleep(ms);
  }

  async hostIdle(): Promise<void> {
    await sleep(this.hostEnd - now());
  }

  /** Modeled milliseconds of host-device copies and of the host's Adam since the last call. */
  takeOffloadMs(): { pcie: number; hostAdam: number } {
    const t = this.offloadMs;
    this.offloadMs = { pcie: 0, hostAdam: 0 };
    return t;
  }

  async start(_x: Float32Array, rows: number): Promise<void> {
    this.queue.inputsReady(now()); // a batch is given now: nothing of it ran before
    if (rows === this.rows) return;
    this.rows = rows;
    this.times = passTimes(this.model, this.cost, rows, this.recompute);
    this.activationBytes = activationBytes(this.model, rows, this.recompute);
  }

  forward(layer: number, _params: GroupParams): Promise<void> {
    return this.wait(this.times.forward[layer]);
  }

  /** The cross-entropy is part of the head's (or the last layer's) modeled work. */
  async loss(): Promise<number> {
    return NaN;
  }

  backward(layer: number, _params: GroupParams, _grad: Float32Array): Promise<void> {
    return this.wait(this.times.backward[layer]);
  }

  /** ZeRO++'s quantization or dequantization of `values` values, on the device. */
  quantize(values: number, codeBytes: number): Promise<void> {
    return this.wait(this.cost.chainMs(quantizeWork(values, codeBytes)));
  }

  /** ZeRO++'s qgZ (de)quantizing `values` values on the reduce stream: behind that stream's kernels, not the
   *  compute's (DeepSpeed reduces gradients on a stream of its own; the two share the device's memory
   *  bandwidth, which this leaves out). */
  quantizeOnReduceStream(values: number, codeBytes: number): Promise<void> {
    this.reduceStream.inputsReady(now()); // the gradients to (de)quantize are here now
    return sleep(this.reduceStream.run(this.cost.chainMs(quantizeWork(values, codeBytes))) - now());
  }

  /** Adam over this rank's `params` owned parameters, fused, on the device. */
  optimizer(params: number, gradBytes: number): Promise<void> {
    return this.wait(this.cost.chainMs(optimizerWork(params, gradBytes)));
  }

  /** Modeled milliseconds since the last call. */
  takeModeledMs(): number {
    const ms = this.waited;
    this.waited = 0;
    return ms;
  }

  async close(): Promise<void> {}

  /** The scheme waited for communication until `at`: the device could not start what follows before then. */
  inputsReady(at: number): void {
    this.queue.inputsReady(at);
  }

  private wait(ms: number): Promise<void> {
    this.waited += ms;
    return sleep(this.queue.run(ms) - now());
  }
}

/**
 * Each layer's share of its pass. A pass is one chain of kernels: the host launches ahead while the GPU
 * works, so the pass takes the cost model's chain time, and each layer gets the part of it that its GPU time
 * (or, when the host is the bottleneck, its host time) is of the whole.
 */
export function passTimes(m: GpuModel, cost: GpuCost, rows: number, recompute: boolean): PassTimes {
  const layers = m.spec.layers.map((_, i) => i);
  const forward = layers.map((i) => layerWork(m, i, rows, 'forward'));
  const backward = layers.map((i) => {
    const w = layerWork(m, i, rows, 'backward');
    return recompute && recomputes(m, i) ? addWork(forward[i], w, { kernels: 0, flops: 0, bytes: 0, hostMs: cost.eff.recomputeHostMs }) : w;
  });
  return { forward: shares(cost, forward), backward: shares(cost, backward) };
}

function shares(cost: GpuCost, works: Work[]): number[] {
  const total = cost.chainMs(...works);
  const host = works.map((w) => cost.hostMs(w));
  const gpu = works.map((w) => cost.gpuMs(w));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const weights = sum(gpu) >= sum(host) ? gpu : host;
  return weights.map((w) => (total * w) / sum(weights));
}
