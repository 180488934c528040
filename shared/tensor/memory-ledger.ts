// Every buffer that holds model state, a gathered copy, a communication copy or compute scratch is
// allocated (or accounted) here, tagged by band, so resident and peak bytes are measured rather than
// derived from a formula.
import { bytesPerElement, emptyOf, type Elems, type WireDtype } from './dtype.js';
import type { WasmHeap } from './heap.js';
import { extentOf } from './extent.js';

/** frozen16: the 16-bit working copy of frozen parameters (LoRA's base), which train not: no gradient, no
 *  master, no moments. secondary: ZeRO++'s hpZ, the gathered weights partitioned over the host's ranks. */
export const MODEL_BANDS = ['params16', 'frozen16', 'kept16', 'secondary', 'grads', 'master', 'm', 'v', 'accum'] as const;
/** DeepSpeed's offload (training/schemes/offload.ts): model states the host holds instead of the device (the
 *  masters, Adam's moments, the fp32 gradient Adam reads and sums; with offload_param, the 16-bit shard).
 *  Apart from the device's: not in the peak, which is the device's. */
export const HOST_BANDS = ['host master', 'host m', 'host v', 'host grads', 'host accum', 'host params16', 'host frozen16'] as const;
/** Transient bands that exist only inside a step: a gathered unit (ZeRO-3) and a unit's full gradient before
 *  it is reduce-scattered (ZeRO-2/3). They count toward the peak. */
const TRANSIENT_BANDS = ['gathered', 'bucket'] as const;
/** Staging copies made by the collectives themselves; reported on their own, outside the model-state theory. */
const COMM_BAND = 'comm' as const;
/** What the compute works in besides the model states: the kernel arena (activations, one layer's
 *  parameters and gradient), a unit's fp32 gradient until it is handed over, the fp32 gradient Adam reads.
 *  Reported on its own, outside the model-state theory (ZeRO does not shard it). */
const COMPUTE_BAND = 'compute' as const;
/** The part of the scheme's WebAssembly heap that holds no band at the moment (sized from the theory with
 *  some room; freed transients wait there for the next step). */
const HEAP_IDLE_BAND = 'heap idle' as const;
/** What the forward pass keeps for the backward pass: ZeRO shards none of it. */
const ACTIVATIONS_BAND = 'activations' as const;
/** This rank's training data, held for the whole run. */
const DATA_BAND = 'data' as const;
/** The links' receive buffers (their pools' arenas and the idle buffers they keep), reused across steps. */
const RECEIVE_BAND = 'receive' as const;
export type Band =
  | (typeof MODEL_BANDS)[number]
  | (typeof HOST_BANDS)[number]
  | (typeof TRANSIENT_BANDS)[number]
  | typeof COMM_BAND
  | typeof COMPUTE_BAND
  | typeof RECEIVE_BAND
  | typeof HEAP_IDLE_BAND
  | typeof DATA_BAND
  | typeof ACTIVATIONS_BAND;
const ALL_BANDS: readonly Band[] = [
  ...MODEL_BANDS,
  ...HOST_BANDS,
  ...TRANSIENT_BANDS,
  COMM_BAND,
  COMPUTE_BAND,
  RECEIVE_BAND,
  HEAP_IDLE_BAND,
  DATA_BAND,
  ACTIVATIONS_BAND,
];

export type BandBytes = Record<Band, number>;

function zeros(): BandBytes {
  return Object.fromEntries(ALL_BANDS.map((b) => [b, 0])) as BandBytes;
}

/** The bands the theory speaks about: model states plus in-step transients (not comm staging). */
const STATE_BANDS: ReadonlySet<Band> = new Set([...MODEL_BANDS, ...TRANSIENT_BANDS]);

export class MemoryLedger {
  readonly live: BandBytes = zeros();
  /** Sums of `live` kept as it changes: every band, and the STATE_BANDS (a peak is checked at every change, and a
   *  simulation of a thousand ranks changes them millions of times). */
  private liveAll = 0;
  private liveState = 0;
  /** Highest residentBytes() seen since the last resetPeak(), and the bands at that moment. */
  peak = 0;
  peakBands: BandBytes = zeros();
  /** Highest live bytes seen per band since the last resetPeak(). */
  peakPerBand: BandBytes = zeros();
  /** Highest sum of every band (model states, transients, staging, compute, receive buffers) since the last
   *  resetPeak(): everything the ledger knows the rank holds at one moment. */
  peakAll = 0;
  peakAllBands: BandBytes = zeros();
  private owned = new WeakMap<object, Band>();
  private readonly external = new Map<object, { band: Band; bytes: number }>();

  /** `heap`: where arrays are allocated while it has room (so the kernels can work on them in place).
   *  `modeled`: a what-if rank's ledger, which hands out extents (sizes without values) and accounts them,
   *  so its bands are the theory's, not memory this process holds. */
  constructor(
    private readonly heap: WasmHeap | null = null,
    readonly modeled = false,
  ) {
    if (heap) this.account(HEAP_IDLE_BAND, heap, heap.idleBytes);
  }

  alloc(band: Band, dtype: WireDtype, n: number): Elems {
    if (this.modeled) return this.track(band, extentOf(dtype, n));
    const heap = this.heap;
    const at = heap?.take(n * bytesPerElement(dtype)) ?? null;
    if (at === null) return this.track(band, emptyOf(dtype, n));
    // The heap's idle part shrinks first, so the sum of the bands never counts the block twice.
    this.account(HEAP_IDLE_BAND, heap!, heap!.idleBytes);
    return this.track(band, dtype === 'fp32' ? new Float32Array(heap!.memory.buffer, at, n) : new Uint16Array(heap!.memory.buffer, at, n));
  }

  allocF32(band: Band, n: number): Float32Array {
    return this.alloc(band, 'fp32', n) as Float32Array;
  }

  /** Start accounting for an array made elsewhere (for example a received payload kept as state). */
  track<T extends Elems>(band: Band, arr: T): T {
    this.owned.set(arr, band);
    this.add(band, arr.byteLength);
    this.notePeak(band);
    return arr;
  }

  private notePeak(band: Band): void {
    if (this.live[band] > this.peakPerBand[band]) this.peakPerBand[band] = this.live[band];
    const all = this.liveAll;
    if (all > this.peakAll) {
      this.peakAll = all;
      this.peakAllBands = { ...this.live };
    }
    const now = this.liveState;
    if (now > this.peak) {
      this.peak = now;
      this.peakBands = { ...this.live };
    }
  }

  /** Account memory that is not a typed array of ours (a WebAssembly memory, say) as `bytes` of `band`,
   *  replacing what was accounted for `owner` before. */
  account(band: Band, owner: object, bytes: number): void {
    const before = this.external.get(owner);
    if (before) this.add(before.band, -before.bytes);
    this.external.set(owner, { band, bytes });
    this.add(band, bytes);
    this.notePeak(band);
  }

  free(arr: Elems | null | undefined): void {
    if (!arr) return;
    const band = this.owned.get(arr);
    if (band === undefined) throw new Error('MemoryLedger.free: array was not allocated by this ledger (or freed twice)');
    this.owned.delete(arr);
    this.add(band, -arr.byteLength);
    if (this.heap && arr.buffer === this.heap.memory.buffer) {
      this.heap.give(arr.byteOffset, arr.byteLength);
      this.account(HEAP_IDLE_BAND, this.heap, this.heap.idleBytes);
    }
  }

  resetPeak(): void {
    this.peakAll = this.totalBytes();
    this.peakAllBands = { ...this.live };
    this.peak = this.liveState;
    this.peakBands = { ...this.live };
    this.peakPerBand = { ...this.live };
  }

  totalBytes(): number {
    return this.liveAll;
  }

  residentBytes(): number {
    return this.liveState;
  }

  private add(band: Band, bytes: number): void {
    this.live[band] += bytes;
    this.liveAll += bytes;
    if (STATE_BANDS.has(band)) this.liveState += bytes;
  }

  /** The model states the host holds (offload). */
  hostBytes(): number {
    return HOST_BANDS.reduce((t, b) => t + this.live[b], 0);
  }
}
