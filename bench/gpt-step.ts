// npm run bench:gpt [-- --model gpt:4,128,4,64 --seqs 1,4,16 --rounds 3 --reps 5 --threads 1]
// One training step (forward, backward, Adam) of a GPT (--model gpt:...), as one rank runs it, next to the
// same model in PyTorch (bench/torch_gpt.py, as many threads) in the same run: alternating rounds,
// medians, and the ratio. Where python3 with torch is missing, PyTorch is reported as missing.
import { describePeer, torchPeer } from './torch-peer.js';
import { KernelArena } from '../shared/tensor/kernel-arena.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { textTable } from '../shared/accounting/table.js';
import { GPT } from '../shared/models/gpt/entry.js';
import { WasmHeap } from '../shared/tensor/heap.js';
import { MemoryLedger } from '../shared/tensor/memory-ledger.js';
import { adamUpdate } from '../shared/training/adam.js';
import { Gpt } from '../shared/models/gpt/compute.js';

const argv = yargs(hideBin(process.argv))
  .option('model', { type: 'string', default: 'gpt:4,128,4,64' })
  .option('seqs', { type: 'string', default: '1,4,16', describe: "sequences per step (a rank's share of the batch)" })
  .option('rounds', { type: 'number', default: 3, describe: 'alternating zerowire / PyTorch rounds' })
  .option('reps', { type: 'number', default: 5, describe: 'repetitions per measurement (median)' })
  .option('threads', { type: 'number', default: 1, describe: "zerowire's threads per product (--threads); PyTorch gets as many" })
  .option('torch', { type: 'boolean', default: true, describe: 'also time PyTorch (python3-torch) in the same run' })
  .strict()
  .parseSync();

const config = GPT.parse(argv.model);
if (!config) throw new Error(`--model: ${argv.model} is not a gpt:... shape`);
const spec = GPT.spec(config);
const { layers, dim, heads, seq, vocab } = config;
const seqsList = argv.seqs.split(',').map(Number);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function ours(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  // The model states in a WebAssembly heap, as a rank holds them (so Adam runs its SIMD kernel).
  const ledger = new MemoryLedger(WasmHeap.create(16 * spec.params + (1 << 20)));
  const [theta, grad, m, v] = (['master', 'grads', 'm', 'v'] as const).map((band) => ledger.allocF32(band, spec.params));
  theta.set(spec.init(0));
  const gpt = new Gpt(spec, { threads: argv.threads });
  await gpt.ready();
  for (const seqs of seqsList) {
    const tokens = Int32Array.from({ length: seqs * seq }, (_, i) => (i * 7) % vocab);
    const targets = Int32Array.from({ length: seqs * seq }, (_, i) => (i * 11) % vocab);
    let t = 0;
    const step = () => {
      gpt.lossAndGradient(theta, tokens, seqs, targets, grad);
      adamUpdate(theta, m, v, grad, ++t, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
    };
    step();
    const times: number[] = [];
    for (let i = 0; i < argv.reps; i++) {
      const t0 = process.hrtime.bigint();
      step();
      times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    }
    out[String(seqs)] = median(times);
  }
  await gpt.close();
  return out;
}

const peer = argv.torch ? torchPeer(argv.threads) : null;

function torch(): Record<string, number> | null {
  if (!peer || peer.refused) return null;
  const script = fileURLToPath(new URL('../../bench/torch_gpt.py', import.meta.url));
  const shape = [layers, dim, heads, seq, vocab].join(',');
  const r = spawnSync('/usr/bin/python3', [script, shape, argv.seqs, String(argv.reps), String(argv.threads)], {
    encoding: 'utf8',
    timeout: 600_000,
    env: peer.env,
  });
  if (r.status !== 0) return null;
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as { step: Record<string, number>; params: number };
  if (got.params !== spec.params) throw new Error(`PyTorch's model has ${got.params} parameters, ours ${spec.params}: not the same model`);
  return got.step;
}

const rounds: { ours: Record<string, number>; torch: Record<string, number> | null }[] = [];
for (let i = 0; i < argv.rounds; i++) rounds.push({ ours: await ours(), torch: torch() });
const haveTorch = rounds.every((r) => r.torch !== null);
console.log(
  `one training step of ${spec.describe()} (${spec.params} parameters): forward, backward, Adam; ${argv.threads} thread(s); products on ${new KernelArena().backend}; median over ${argv.rounds} alternating rounds of ${argv.reps}`,
);
console.log(argv.torch ? describePeer(peer, argv.threads) : 'PyTorch: not measured (--no-torch)');
const head = [['sequences', 'tokens', 'zerowire ms', ...(haveTorch ? ['PyTorch ms', 'zerowire / PyTorch'] : [])]];
const body = seqsList.map((seqs) => {
  const a = median(rounds.map((r) => r.ours[String(seqs)])) * 1e3;
  const row = [String(seqs), String(seqs * seq), a.toFixed(1)];
  if (!haveTorch) return row;
  const b = median(rounds.map((r) => r.torch![String(seqs)])) * 1e3;
  return [...row, b.toFixed(1), (a / b).toFixed(2)];
});
console.log(textTable(head, body));
