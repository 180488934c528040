// npm run bench:collectives -- --world 4 [--dtype fp32|bf16] [--max-mib 64] [--chunk-kib 1024] [--rounds 3]
// Times ring all-reduce, reduce-scatter and all-gather across separate processes on loopback, and in the
// same run a plain TCP ring between the same processes and torch.distributed gloo, so ratios are free of
// the machine's drift. CPU time per iteration is printed too: on a loaded loopback it is what limits busbw.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { RingProcesses } from './ring-processes.js';
import type { Timing, WorkerReply } from './ring-worker.js';

const argv = yargs(hideBin(process.argv))
  .option('world', { type: 'number', default: 4, describe: 'ranks (processes)' })
  .option('dtype', { choices: ['fp32', 'bf16'] as const, default: 'fp32' as const })
  .option('min-kib', { type: 'number', default: 1 })
  .option('max-mib', { type: 'number', default: 64 })
  .option('chunk-kib', { type: 'number', default: 1024, describe: 'collective chunk size' })
  .option('kinds', { type: 'string', default: 'all-reduce,reduce-scatter,all-gather' })
  .option('gloo', { type: 'boolean', default: true, describe: 'also time torch.distributed gloo (python3-torch) in the same run' })
  .option('rounds', { type: 'number', default: 5, describe: 'alternating zerowire / gloo rounds at the largest size' })
  .strict()
  .parseSync();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmtBytes = (b: number) => (b >= 1 << 20 ? `${b / (1 << 20)} MiB` : `${b / 1024} KiB`);
const busFactor = (kind: string, n: number) => (kind === 'all-reduce' ? (2 * (n - 1)) / n : (n - 1) / n);
const row = (cells: (string | number)[]) => console.log(cells.map((c) => ` ${String(c).padStart(14)}`).join(''));

interface Measured {
  seconds: number; // median over iterations of the slowest rank
  busbw: number;
  userMs: number; // CPU per rank per iteration, mean over ranks
  sysMs: number;
  overhead: number; // socket bytes beyond the payload, as a fraction of it (mean over ranks)
}

/** A collective ends when its slowest rank ends: the max over ranks per iteration, then the median. */
function summarise(kind: string, bytes: number, n: number, perRank: Timing[]): Measured {
  const perIter = perRank[0].seconds.map((_, i) => Math.max(...perRank.map((t) => t.seconds[i])));
  const seconds = median(perIter);
  const mean = (f: (t: Timing) => number) => perRank.reduce((s, t) => s + f(t), 0) / perRank.length;
  return {
    seconds,
    busbw: (bytes / seconds / 1e9) * busFactor(kind, n),
    userMs: mean((t) => t.userMs),
    sysMs: mean((t) => t.sysMs),
    overhead: mean((t) => t.overhead),
  };
}

async function zerowire(procs: RingProcesses, bytes: number, iters: number, kinds: string[]): Promise<Record<string, Measured>> {
  const replies = (await procs.all({ cmd: 'bench', bytes, dtype: argv.dtype, iters, kinds }, 'timings')) as Extract<WorkerReply, { kind: 'timings' }>[];
  return Object.fromEntries(
    kinds.map((k) => [
      k,
      summarise(
        k,
        bytes,
        procs.world,
        replies.map((r) => r.results[k]),
      ),
    ]),
  );
}

/** gloo's fp32 all-reduce of `bytes` over `world` processes, or null where torch is missing. */
function gloo(world: number, bytes: number, iters: number): Measured | null {
  const script = fileURLToPath(new URL('../../bench/gloo_allreduce.py', import.meta.url));
  const r = spawnSync('/usr/bin/python3', [script, String(world), String(bytes), String(iters)], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return null;
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { seconds: number[]; user_ms: number; sys_ms: number };
  const seconds = median(out.seconds);
  return { seconds, busbw: (bytes / seconds / 1e9) * busFactor('all-reduce', world), userMs: out.user_ms, sysMs: out.sys_ms, overhead: 0 };
}

const cpu = (m: Measured) => `${m.userMs.toFixed(1)}+${m.sysMs.toFixed(1)}`;

/** Every size from --min-kib to --max-mib, each collective: time, algbw, busbw, CPU and frame overhead. */
async function sweep(procs: RingProcesses, kinds: string[], big: number): Promise<void> {
  row(['size', 'collective', 'time ms', 'algbw GB/s', 'busbw GB/s', 'cpu ms', 'frame ovh %']);
  for (let bytes = argv['min-kib'] * 1024; bytes <= big; bytes *= 4) {
    const iters = bytes >= 16 << 20 ? 5 : bytes >= 1 << 20 ? 10 : 30;
    const m = await zerowire(procs, bytes, iters, kinds);
    for (const kind of kinds)
      row([
        fmtBytes(bytes),
        kind,
        (m[kind].seconds * 1000).toFixed(2),
        (bytes / m[kind].seconds / 1e9).toFixed(3),
        m[kind].busbw.toFixed(3),
        cpu(m[kind]),
        (100 * m[kind].overhead).toFixed(3),
      ]);
  }
}

/** A plain TCP ring between the same processes: GB/s per link, the ceiling a transport on sockets works under. */
async function plainRing(procs: RingProcesses, big: number): Promise<number> {
  const tcp = (await procs.all({ cmd: 'tcp', bytes: big, iters: 5 }, 'tcp')) as Extract<WorkerReply, { kind: 'tcp' }>[];
  const plain = summarise(
    'pipe',
    big,
    procs.world,
    tcp.map((r) => r.timing),
  );
  const pipe = big / plain.seconds / 1e9;
  console.log(
    `\nplain TCP ring between the same processes (${fmtBytes(big)} per link, all links at once; 1 MiB writes, reads into one reused buffer): ${pipe.toFixed(3)} GB/s per link, cpu ${cpu(plain)} ms`,
  );
  return pipe;
}

/** zerowire's and gloo's fp32 all-reduce of `big`, taking turns so that both see the same machine. */
async function againstGloo(procs: RingProcesses, big: number, pipe: number): Promise<void> {
  const N = procs.world;
  const ours: Measured[] = [];
  const theirs: Measured[] = [];
  for (let round = 0; round < argv.rounds; round++) {
    ours.push((await zerowire(procs, big, 5, ['all-reduce']))['all-reduce']);
    const g = argv.gloo ? gloo(N, big, 5) : null;
    if (g) theirs.push(g);
  }
  const busbws = (ms: Measured[]) => ms.map((m) => m.busbw);
  const cpuOf = (ms: Measured[]) => cpu({ ...ms[0], userMs: median(ms.map((m) => m.userMs)), sysMs: median(ms.map((m) => m.sysMs)) });
  const zw = median(busbws(ours));
  console.log(`\n${fmtBytes(big)} fp32 all-reduce, ${argv.rounds} alternating rounds (medians; busbw of each round after the colon):`);
  row(['', 'busbw GB/s', 'cpu ms']);
  console.log(
    `${[' zerowire', zw.toFixed(3), cpuOf(ours)].map((c) => c.padStart(15)).join('')}  : ${busbws(ours)
      .map((b) => b.toFixed(2))
      .join(' ')}`,
  );
  if (theirs.length === 0) {
    console.log(`zerowire = ${((100 * zw) / pipe).toFixed(0)}% of the plain TCP ring`);
    console.log(
      argv.gloo
        ? 'torch.distributed gloo: not measured (needs /usr/bin/python3 with torch: apt-get install python3-torch)'
        : 'torch.distributed gloo: not measured (--no-gloo)',
    );
    return;
  }
  const gl = median(busbws(theirs));
  console.log(
    `${[' gloo', gl.toFixed(3), cpuOf(theirs)].map((c) => c.padStart(15)).join('')}  : ${busbws(theirs)
      .map((b) => b.toFixed(2))
      .join(' ')}`,
  );
  const perRound = ours.map((m, i) => m.busbw / (theirs[i] ?? theirs[0]).busbw);
  console.log(
    `zerowire = ${((100 * zw) / pipe).toFixed(0)}% of the plain TCP ring; zerowire / gloo = ${(zw / gl).toFixed(2)}x (median of per-round ratios ${median(perRound).toFixed(2)}x)`,
  );
  const cores = availableParallelism();
  if (N > cores) {
    // More ranks than cores: the run is CPU-bound and busbw follows total CPU per all-reduce. The kernel's
    // share (TCP copies and stack) is the floor of any implementation on sockets.
    const total = (ms: Measured[]) => median(ms.map((m) => m.userMs + m.sysMs));
    const kernel = median(ours.map((m) => m.sysMs));
    console.log(
      `CPU-bound (${N} ranks on ${cores} cores): CPU per rank per all-reduce ${total(ours).toFixed(1)} ms (zerowire) vs ${total(theirs).toFixed(1)} ms (gloo); even with no user time at all, zerowire / gloo could reach only about ${(total(theirs) / kernel).toFixed(2)}x (gloo's CPU / zerowire's kernel CPU)`,
    );
  }
}

async function main(): Promise<void> {
  const N = argv.world;
  const kinds = argv.kinds.split(',');
  const big = argv['max-mib'] * (1 << 20);
  const procs = await RingProcesses.start(N, { CHUNK_BYTES: String(argv['chunk-kib'] * 1024) });
  const stop = () => procs.kill();
  process.once('SIGINT', stop);
  try {
    console.log(`ring collectives, ${N} processes on loopback, ${argv.dtype}, chunk ${argv['chunk-kib']} KiB`);
    console.log('nccl-tests definitions: algbw = size/time; busbw = algbw * 2(N-1)/N for all-reduce, (N-1)/N for the others;');
    console.log('cpu = user+kernel ms per rank per iteration (all threads of the process, mean over ranks);');
    console.log('frame overhead = socket bytes written beyond the tensor payload (ws headers, msgpack envelopes), % of payload\n');
    await sweep(procs, kinds, big);
    const pipe = await plainRing(procs, big);
    if (kinds.includes('all-reduce') && argv.dtype === 'fp32') await againstGloo(procs, big, pipe);
  } finally {
    process.off('SIGINT', stop);
    await procs.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
