// npm run bench:compute [-- --model 512,1024,512,10 --rows 16,64,256 --rounds 3 --reps 7]
// GFLOP/s of each compute kernel at the model's layer shapes, and one training step of the model (forward,
// backward, Adam) on --threads threads, next to PyTorch (bench/torch_compute.py, as many threads) in the same run:
// alternating rounds, medians, and the ratio. Where python3 with torch is missing, PyTorch is reported
// as missing.
import { describePeer, torchPeer } from './torch-peer.js';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { textTable } from '../shared/accounting/table.js';
import { WasmHeap } from '../shared/tensor/heap.js';
import { KernelArena } from '../shared/tensor/kernel-arena.js';
import { MemoryLedger } from '../shared/tensor/memory-ledger.js';
import { adamUpdate } from '../shared/training/adam.js';
import { Mlp, MlpSpec } from '../shared/models/mlp/mlp.js';

const argv = yargs(hideBin(process.argv))
  .option('model', { type: 'string', default: '512,1024,512,10' })
  .option('rows', { type: 'string', default: '16,64,256', describe: 'batch rows per rank' })
  .option('rounds', { type: 'number', default: 3, describe: 'alternating zerowire / PyTorch rounds' })
  .option('reps', { type: 'number', default: 7, describe: 'repetitions per measurement (median)' })
  .option('threads', { type: 'number', default: 1, describe: "zerowire's threads per product (--threads); PyTorch gets as many" })
  .option('torch', { type: 'boolean', default: true, describe: 'also time PyTorch (python3-torch) in the same run' })
  .strict()
  .parseSync();

const widths = argv.model.split(',').map(Number);
const rowsList = argv.rows.split(',').map(Number);
const spec = new MlpSpec(widths);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function medianSeconds(fn: () => void): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < argv.reps; i++) {
    const t = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }
  return median(times);
}

interface Round {
  kernels: Record<string, { forward: number; dx: number; dw: number }>;
  step: Record<string, number>;
}

async function ours(): Promise<Round> {
  const out: Round = { kernels: {}, step: {} };
  const arena = new KernelArena({ threads: argv.threads });
  await arena.par?.ready();
  const rand = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37));
  for (const rows of rowsList)
    for (const l of spec.layers) {
      const { inputs: K, outputs: N } = l;
      arena.layout({ x: rows * K, w: N * K, b: N, y: rows * N, dy: rows * N, dx: rows * K, dw: N * K });
      for (const r of ['x', 'w', 'b', 'dy']) arena.load(r, rand(arena.f32(r).length));
      out.kernels[`${rows}x${K}x${N}`] = {
        forward: medianSeconds(() => arena.linearForward(arena.at('x'), arena.at('w'), arena.at('b'), arena.at('y'), rows, K, N)),
        dx: medianSeconds(() => arena.matmulNN(arena.at('dy'), arena.at('w'), arena.at('dx'), rows, K, N)),
        dw: medianSeconds(() => arena.matmulTN(arena.at('dy'), arena.at('x'), arena.at('dw'), N, K, rows)),
      };
    }
  // The model states in a WebAssembly heap, as a rank holds them (so Adam runs its SIMD kernel).
  const ledger = new MemoryLedger(WasmHeap.create(16 * spec.params + (1 << 20)));
  const [theta, grad, m, v] = (['master', 'grads', 'm', 'v'] as const).map((band) => ledger.allocF32(band, spec.params));
  theta.set(spec.init(0));
  const mlp = new Mlp(spec, { threads: argv.threads });
  await mlp.ready();
  for (const rows of rowsList) {
    const x = Float32Array.from({ length: rows * spec.inputs }, (_, i) => Math.cos(i));
    const y = Int32Array.from({ length: rows }, (_, i) => i % spec.classes);
    let t = 0;
    out.step[String(rows)] = medianSeconds(() => {
      mlp.lossAndGradient(theta, x, rows, y, grad);
      adamUpdate(theta, m, v, grad, ++t, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 });
    });
  }
  await Promise.all([arena.par?.close(), mlp.close()]);
  return out;
}

const peer = argv.torch ? torchPeer(argv.threads) : null;

function torch(): Round | null {
  if (!peer || peer.refused) return null;
  const script = fileURLToPath(new URL('../../bench/torch_compute.py', import.meta.url));
  const r = spawnSync('/usr/bin/python3', [script, argv.model, argv.rows, String(argv.reps), String(argv.threads)], {
    encoding: 'utf8',
    timeout: 600_000,
    env: peer.env,
  });
  if (r.status !== 0) return null;
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Round;
}

const rounds: { ours: Round; torch: Round | null }[] = [];
for (let i = 0; i < argv.rounds; i++) rounds.push({ ours: await ours(), torch: torch() });
const haveTorch = rounds.every((r) => r.torch !== null);

const gflops = (rows: number, K: number, N: number, s: number) => (2 * rows * K * N) / s / 1e9;
const pick = (f: (r: Round) => number, who: 'ours' | 'torch') => median(rounds.map((r) => f(r[who]!)));
console.log(
  `compute, ${argv.threads} thread(s) each: products on ${new KernelArena().backend}; median over ${argv.rounds} alternating rounds of ${argv.reps} repetitions`,
);
console.log(argv.torch ? describePeer(peer, argv.threads) : 'PyTorch: not measured (--no-torch)');
const head = [['rows x in x out', 'product', 'zerowire GFLOP/s', ...(haveTorch ? ['PyTorch GFLOP/s', 'zerowire / PyTorch time'] : [])]];
const body: string[][] = [];
for (const key of Object.keys(rounds[0].ours.kernels)) {
  const [rows, K, N] = key.split('x').map(Number);
  for (const p of ['forward', 'dx', 'dw'] as const) {
    const a = pick((r) => r.kernels[key][p], 'ours');
    const row = [key, p === 'forward' ? 'Y = X·Wᵀ + b' : p === 'dx' ? 'dX = dY·W' : 'dW = dYᵀ·X', gflops(rows, K, N, a).toFixed(2)];
    if (haveTorch) {
      const b = pick((r) => r.kernels[key][p], 'torch');
      row.push(gflops(rows, K, N, b).toFixed(2), (a / b).toFixed(2));
    }
    body.push(row);
  }
}
console.log(textTable(head, body));
console.log(`\none training step of ${argv.model} (${spec.params} parameters): forward, backward, Adam`);
const stepHead = [['rows', 'zerowire ms', ...(haveTorch ? ['PyTorch ms', 'zerowire / PyTorch'] : [])]];
const stepBody = rowsList.map((rows) => {
  const a = pick((r) => r.step[String(rows)], 'ours') * 1e3;
  if (!haveTorch) return [String(rows), a.toFixed(1)];
  const b = pick((r) => r.step[String(rows)], 'torch') * 1e3;
  return [String(rows), a.toFixed(1), b.toFixed(1), (a / b).toFixed(2)];
});
console.log(textTable(stepHead, stepBody));
