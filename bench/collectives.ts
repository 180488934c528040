// npm run bench:collectives -- --world 4 [--dtype fp32|bf16] [--max-mib 64] [--chunk-kib 1024]
// Times ring all-reduce, reduce-scatter and all-gather across separate processes on loopback, and in the
// same run a plain TCP ring between the same processes, so the ratio is free of machine noise.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { RingProcesses } from './ring-processes.js';

const argv = yargs(hideBin(process.argv))
  .option('world', { type: 'number', default: 4, describe: 'ranks (processes)' })
  .option('dtype', { choices: ['fp32', 'bf16'] as const, default: 'fp32' as const })
  .option('min-kib', { type: 'number', default: 1 })
  .option('max-mib', { type: 'number', default: 64 })
  .option('chunk-kib', { type: 'number', default: 1024, describe: 'collective chunk size' })
  .option('kinds', { type: 'string', default: 'all-reduce,reduce-scatter,all-gather' })
  .option('gloo', { type: 'boolean', default: true, describe: 'also time torch.distributed gloo (python3-torch) in the same run' })
  .strict()
  .parseSync();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmtBytes = (b: number) => (b >= 1 << 20 ? `${b / (1 << 20)} MiB` : `${b / 1024} KiB`);

/** busbw of a gloo fp32 all-reduce of `bytes` over `world` processes, or null where torch is missing. */
function glooBusbw(world: number, bytes: number): number | null {
  const script = fileURLToPath(new URL('../../bench/gloo_allreduce.py', import.meta.url));
  const r = spawnSync('/usr/bin/python3', [script, String(world), String(bytes), '5'], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) return null;
  const { seconds } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { seconds: number[] };
  return (bytes / median(seconds) / 1e9) * ((2 * (world - 1)) / world);
}

async function main(): Promise<void> {
  const N = argv.world;
  const kinds = argv.kinds.split(',');
  const procs = await RingProcesses.start(N, { CHUNK_BYTES: String(argv['chunk-kib'] * 1024) });
  const stop = () => procs.kill();
  process.once('SIGINT', stop);
  try {
    console.log(`ring collectives, ${N} processes on loopback, ${argv.dtype}, chunk ${argv['chunk-kib']} KiB (nccl-tests: algbw = size/time; busbw = algbw * 2(N-1)/N for all-reduce, (N-1)/N for the others)`);
    console.log(['size', 'collective', 'time ms', 'algbw GB/s', 'busbw GB/s'].map((h) => h.padStart(16)).join(''));
    const busbwAt: Record<string, number> = {};
    for (let bytes = argv['min-kib'] * 1024; bytes <= argv['max-mib'] * (1 << 20); bytes *= 4) {
      const iters = bytes >= 16 << 20 ? 5 : bytes >= 1 << 20 ? 10 : 30;
      const replies = await procs.all({ cmd: 'bench', bytes, dtype: argv.dtype, iters, kinds }, 'timings');
      for (const kind of kinds) {
        // A collective ends when its slowest rank ends: take the max over ranks per iteration, then the median.
        const perIter = replies[0].results[kind].map((_, i) => Math.max(...replies.map((r) => r.results[kind][i])));
        const t = median(perIter);
        const algbw = bytes / t / 1e9;
        const busbw = algbw * (kind === 'all-reduce' ? (2 * (N - 1)) / N : (N - 1) / N);
        busbwAt[`${kind}@${bytes}`] = busbw;
        console.log([fmtBytes(bytes), kind, (t * 1000).toFixed(2), algbw.toFixed(3), busbw.toFixed(3)].map((c) => String(c).padStart(16)).join(''));
      }
    }
    const big = argv['max-mib'] * (1 << 20);
    const tcp = await procs.all({ cmd: 'tcp', bytes: big, iters: 5 }, 'tcp');
    const perIter = tcp[0].seconds.map((_, i) => Math.max(...tcp.map((r) => r.seconds[i])));
    const pipe = big / median(perIter) / 1e9;
    console.log(`\nplain TCP ring between the same processes (${fmtBytes(big)} per link, all links at once): ${pipe.toFixed(3)} GB/s per link`);
    const ar = busbwAt[`all-reduce@${big}`];
    if (ar !== undefined) {
      console.log(`all-reduce busbw at ${fmtBytes(big)}: ${ar.toFixed(3)} GB/s = ${((100 * ar) / pipe).toFixed(0)}% of the plain TCP ring`);
      const gloo = argv.gloo ? glooBusbw(N, big) : null;
      if (gloo === null) console.log('torch.distributed gloo: not measured (needs /usr/bin/python3 with torch: apt-get install python3-torch)');
      else console.log(`torch.distributed gloo all-reduce busbw at ${fmtBytes(big)}, same machine, same run: ${gloo.toFixed(3)} GB/s -> zerowire/gloo = ${(ar / gloo).toFixed(2)}x`);
    }
  } finally {
    process.off('SIGINT', stop);
    await procs.stop();
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
