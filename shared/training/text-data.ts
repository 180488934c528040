// Text for the GPT to learn, generated here from a seed (nothing is downloaded): sentences of a small
// grammar over a 30-character alphabet ("the old king finds a green ship near the river."), tokenised one
// character per token. Sample i is the window of SEQ tokens starting at i*SEQ, its targets the same window
// shifted by one. Words, their spelling and the sentence shape are learnable, so the loss falls clearly
// within a few hundred steps.
import { EpochOrder, int64, type Batch, type DumpedData, type TrainingData } from './data.js';
import { Rng } from './rng.js';

const ALPHABET = ' abcdefghijklmnopqrstuvwxyz.,\n';

const WORDS = {
  det: ['the', 'a', 'one', 'every', 'that'],
  adj: ['small', 'old', 'red', 'quiet', 'happy', 'green', 'tall', 'cold'],
  noun: ['cat', 'dog', 'bird', 'ship', 'tree', 'river', 'house', 'king', 'child', 'stone', 'horse', 'garden'],
  verb: ['sees', 'likes', 'finds', 'follows', 'builds', 'carries', 'watches', 'paints'],
  prep: ['near', 'under', 'behind', 'over', 'beside', 'inside'],
};

function sentence(rng: Rng): string {
  const pick = (xs: string[]) => xs[Math.floor(rng.uniform() * xs.length)];
  const phrase = () => [pick(WORDS.det), ...(rng.uniform() < 0.5 ? [pick(WORDS.adj)] : []), pick(WORDS.noun)].join(' ');
  let s = `${phrase()} ${pick(WORDS.verb)} ${phrase()}`;
  if (rng.uniform() < 0.4) s += ` ${pick(WORDS.prep)} ${phrase()}`;
  if (rng.uniform() < 0.2) s += `, and ${phrase()} ${pick(WORDS.verb)} ${phrase()}`;
  return `${s}.`;
}

/** `chars` characters of the corpus for `seed`. */
function corpus(chars: number, seed: number): string {
  const rng = new Rng(seed ^ 0x7e47);
  const parts: string[] = [];
  let n = 0;
  for (let k = 1; n < chars; k++) {
    const s = sentence(rng) + (k % 4 === 0 ? '\n' : ' ');
    parts.push(s);
    n += s.length;
  }
  return parts.join('').slice(0, chars);
}

export class TextData implements TrainingData {
  readonly tokens: Int32Array; // samples * seq + 1 token ids
  private readonly order: EpochOrder;

  constructor(
    readonly seq: number,
    readonly vocab: number,
    readonly samples: number,
    readonly seed: number,
  ) {
    if (vocab < ALPHABET.length)
      throw new RangeError(`gpt: a vocabulary of ${vocab} cannot hold the corpus's ${ALPHABET.length} characters (VOCAB >= ${ALPHABET.length})`);
    const text = corpus(samples * seq + 1, seed);
    this.tokens = Int32Array.from(text, (c) => ALPHABET.indexOf(c));
    this.order = new EpochOrder(samples, seed);
  }

  get bytes(): number {
    return this.tokens.byteLength;
  }

  globalRows(step: number, batch: number): Int32Array {
    return this.order.globalRows(step, batch);
  }

  rankBatch(step: number, batch: number, rank: number, world: number): Batch {
    return this.gather(this.order.rankRows(step, batch, rank, world));
  }

  dumped(): DumpedData {
    return {
      tensors: [['tokens', { dtype: 'I64', shape: [this.tokens.length], data: int64(this.tokens) }]],
      meta: {
        note: 'sample i is tokens[i*seq : i*seq+seq], its targets tokens[i*seq+1 : i*seq+seq+1]; step t trains on samples batch_rows[t]; rank r of N takes the contiguous r-th 1/N; loss is the mean over every token of the global batch',
        alphabet: JSON.stringify(ALPHABET),
      },
    };
  }

  /** Windows `rows` as a batch: x the token ids (exact in fp32), y the next token of each. */
  gather(rows: Int32Array): Batch {
    const T = this.seq;
    const x = new Float32Array(rows.length * T);
    const y = new Int32Array(rows.length * T);
    rows.forEach((row, i) => {
      for (let t = 0; t < T; t++) {
        x[i * T + t] = this.tokens[row * T + t];
        y[i * T + t] = this.tokens[row * T + t + 1];
      }
    });
    return { x, y, rows: rows.length };
  }
}

/** Our token ids are 16-bit: why a vocabulary of `vocab` cannot be trained on real data, or null. */
export function textVocabProblem(vocab: number): string | null {
  const MAX = 65536;
  return vocab > MAX ? `vocabulary ${vocab} is more than ${MAX}: train it with --compute model:PRESET (no data, modeled compute)` : null;
}
