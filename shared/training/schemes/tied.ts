// A tied head (tie_word_embeddings): the head computes with the token table, which is the embeddings' first
// tensor, not a parameter of its own (param-group.ts's Borrowed). The step hands the head's passes its own
// parameters with the table after them, taken from the embeddings' unit (its working copy, or under ZeRO-3 a
// gather of it: the table is gathered again for the head, forward and backward, as DeepSpeed's hooks fetch a
// shared parameter for each module that uses it), and carries the table's gradient from the head's backward
// pass to the embeddings', where the two are summed before the unit's gradient is reduced: one parameter, one
// gradient, as autograd sums it.
import type { Elems } from '../../tensor/dtype.js';
import type { Piece, ShardLayout, Unit } from '../layout.js';
import type { Borrowed, GroupParams } from '../param-group.js';
import type { SchemeContext } from './context.js';

interface Tie {
  borrower: { unit: Unit; piece: Piece };
  lender: { unit: Unit; piece: Piece };
  borrowed: Borrowed;
  /** The table trains (the embeddings' trainable rest starts with it); false: it is frozen, no gradient kept. */
  trains: boolean;
}

function pieceOf(layout: ShardLayout, group: number): { unit: Unit; piece: Piece } {
  for (const unit of layout.units) for (const piece of unit.pieces) if (piece.layer.index === group) return { unit, piece };
  throw new RangeError(`no unit holds group ${group}`);
}

export class TiedWeights {
  private readonly tie: Tie;
  private readonly params: Elems; // the head's trainable rest with the table after it, in the working dtype
  private readonly grad: Float32Array; // their gradient
  private readonly carry: Float32Array; // the table's gradient from the head, until the embeddings' backward pass
  private carried = false;

  /** The layout's tie, or null where no group borrows. */
  static of(ctx: SchemeContext): TiedWeights | null {
    const g = ctx.layout.units.flatMap((u) => u.pieces).find((p) => p.layer.borrows);
    return g ? new TiedWeights(ctx, g.layer.borrows!, pieceOf(ctx.layout, g.layer.index)) : null;
  }

  private constructor(
    private readonly ctx: SchemeContext,
    borrowed: Borrowed,
    borrower: { unit: Unit; piece: Piece },
  ) {
    const lender = pieceOf(ctx.layout, borrowed.from);
    const l = lender.piece.layer;
    if (l.frozen !== 0 && l.frozen < borrowed.size)
      throw new RangeError(`the tied table of group ${l.index} is partly frozen (${l.frozen} of its ${borrowed.size} elements)`);
    this.tie = { borrower, lender, borrowed, trains: l.frozen === 0 };
    const own = borrower.piece.layer.size - borrower.piece.layer.frozen;
    this.params = ctx.ledger.alloc('compute', ctx.dtype, own + borrowed.size);
    this.grad = ctx.ledger.allocF32('compute', own + borrowed.size);
    this.carry = ctx.ledger.allocF32('compute', this.tie.trains ? borrowed.size : 0);
  }

  /** The unit whose parameters a unit's borrowing piece needs, if `u` holds it. */
  lenderFor(u: Unit): Unit | null {
    return this.tie.borrower.unit === u ? this.tie.lender.unit : null;
  }

  /** Whether `piece` is the borrowing one. */
  borrows(piece: Piece): boolean {
    return piece === this.tie.borrower.piece;
  }

  /** The head's parameters: its own, the table after them (from the lending unit's, frozen or trainable). */
  paramsFor(own: GroupParams, lending: { frozen: Elems; trainable: Elems }): GroupParams {
    const { piece } = this.tie.lender;
    const size = this.tie.borrowed.size;
    const table = this.tie.trains
      ? lending.trainable.subarray(piece.trainAt, piece.trainAt + size)
      : lending.frozen.subarray(piece.frozenAt, piece.frozenAt + size);
    const n = own[1].length;
    this.params.set(own[1] as never, 0);
    this.params.set(table as never, n);
    return [own[0], this.params.subarray(0, n + size)];
  }

  /** Where the head's backward pass writes (its own gradient, then the table's). */
  gradFor(own: number): Float32Array {
    return this.grad.subarray(0, own + this.tie.borrowed.size);
  }

  /** The head's backward pass is done: its own gradient into the unit's `g`, the table's kept for the embeddings. */
  settle(g: Float32Array): void {
    const { piece } = this.tie.borrower;
    const own = piece.layer.size - piece.layer.frozen;
    g.set(this.grad.subarray(0, own), piece.trainAt);
    if (!this.tie.trains) return;
    this.carry.set(this.grad.subarray(own, own + this.tie.borrowed.size));
    this.carried = true;
  }

  /** Unit `u`'s backward pass is done: if it lends the table, the head's gradient of it is added to the unit's `g`. */
  addCarried(u: Unit, g: Float32Array): void {
    if (this.tie.lender.unit !== u || !this.carried) return;
    const at = this.tie.lender.piece.trainAt;
    this.ctx.values.addF32(g.subarray(at, at + this.tie.borrowed.size), this.carry);
    this.carried = false;
  }
}
