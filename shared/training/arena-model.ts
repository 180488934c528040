// What the MLP and the GPT share: a kernel arena (with its optional kernel threads) and the passes driven
// one parameter group at a time, so a scheme can hand each group's parameters over just in time. A whole
// pass over a flat parameter vector, as one process training alone runs it, is the same for both.
import { KernelArena } from '../tensor/kernel-arena.js';
import { touchPages } from '../tensor/wasm/memories.js';
import type { Elems } from '../tensor/dtype.js';
import type { GroupParams, ParamGroup } from './param-group.js';

export abstract class ArenaModel {
  readonly arena: KernelArena;

  /** `threads`: how many threads compute the products (--threads); `threadScript`: see KernelArena. */
  constructor(opts: { threads?: number; threadScript?: URL } = {}) {
    this.arena = new KernelArena(opts);
  }

  protected abstract get groups(): readonly ParamGroup[];
  /** Bytes the forward pass keeps for the backward pass, as laid out for the current batch. */
  abstract activationBytes: number;
  abstract start(x: ArrayLike<number>, rows: number): void;
  /** `params`: the group's frozen prefix and trainable rest, or the whole group in one array. */
  abstract forward(group: number, params: Elems | GroupParams): void;
  abstract loss(labels: Int32Array, gradScale?: number): number;
  /** The gradient of the group's trainable part into `grad` (its size: the whole group when nothing is frozen). */
  abstract backward(group: number, params: Elems | GroupParams, grad: Float32Array): void;

  /** start(), and the pages the arena grew by mapped a slice at a time (touchPages), not in the first pass. */
  async startSliced(x: ArrayLike<number>, rows: number): Promise<void> {
    const before = this.arena.bytes;
    this.start(x, rows);
    if (this.arena.bytes > before) await touchPages(this.arena.memory, before);
  }

  /** Resolves once the kernel threads (if any) run. */
  async ready(): Promise<void> {
    await this.arena.par?.ready();
  }

  /** Stop the kernel threads. */
  async close(): Promise<void> {
    await this.arena.par?.close();
  }

  /** Bytes the arena holds: activations, one group's parameters and gradient, the backward scratch. */
  get bytes(): number {
    return this.arena.bytes;
  }

  /** The whole model at once: the loss, and every trainable parameter's gradient in `grad` (laid out like
   *  `theta`; frozen ones left as they were). */
  lossAndGradient(theta: Float32Array, x: ArrayLike<number>, rows: number, labels: Int32Array, grad: Float32Array): number {
    const of = (a: Float32Array, g: ParamGroup) => a.subarray(g.offset, g.offset + g.size);
    this.start(x, rows);
    for (const g of this.groups) this.forward(g.index, of(theta, g));
    const loss = this.loss(labels);
    for (const g of [...this.groups].reverse()) this.backward(g.index, of(theta, g), grad.subarray(g.offset + g.frozen, g.offset + g.size));
    return loss;
  }
}
