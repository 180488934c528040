// One rank of a collectives benchmark or check, run as its own OS process (forked by bench/collectives.ts
// or by the tests). It talks to the parent over Node's IPC channel only to find its peers and report.
import { createServer, connect, type Socket } from 'node:net';
import { Collectives } from '../shared/collectives/collectives.js';
import { bytesPerElement, emptyOf, type Elems, type WireDtype } from '../shared/tensor/dtype.js';
import { PeerListener, wireRing } from '../shared/transport/ring.js';

export type WorkerCommand =
  | { cmd: 'wire'; ports: number[]; tcpPorts: number[] }
  | { cmd: 'verify'; length: number; dtype: WireDtype }
  | { cmd: 'bench'; bytes: number; dtype: WireDtype; iters: number; kinds: string[] }
  | { cmd: 'tcp'; bytes: number; iters: number }
  | { cmd: 'exit' };

export type WorkerReply =
  | { kind: 'listening'; port: number; tcpPort: number }
  | { kind: 'wired' }
  | { kind: 'verified'; ok: boolean; detail: string; payloadSent: number; frameSent: number }
  | { kind: 'timings'; results: Record<string, Timing> }
  | { kind: 'tcp'; timing: Timing }
  | { kind: 'error'; message: string };

/** Seconds per iteration, this process's CPU time per iteration (all threads, user and kernel), and the
 *  bytes its socket wrote beyond the tensor payload, as a fraction of the payload. */
export interface Timing {
  seconds: number[];
  userMs: number;
  sysMs: number;
  overhead: number;
}

/** Deterministic small-integer data: sums are exact in fp32, so every rank can check the result itself. */
function pattern(rank: number, n: number): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = ((i * 7 + rank * 13) % 61) - 30;
  return x;
}

const rank = Number(process.env.RANK);
const world = Number(process.env.WORLD_SIZE);
const chunkBytes = Number(process.env.CHUNK_BYTES ?? 1 << 20);
const reply = (m: WorkerReply) => process.send?.(m);
const BENCH_KEY = new Uint8Array(32).fill(7); // loopback benchmark: a fixed ring key is enough

async function main(): Promise<void> {
  if (!process.send) throw new Error('ring-worker must be forked with an IPC channel');
  const listener = await PeerListener.open(0, '127.0.0.1');
  // A plain TCP listener too, for the raw-socket baseline measured between the same processes.
  // Wired like the ring: the next rank dials in and this rank writes to it; the dialler reads.
  let tcpOut: Socket | null = null;
  const tcpServer = createServer((s) => (tcpOut = s)).listen(0, '127.0.0.1');
  await new Promise((r) => tcpServer.once('listening', r));
  let coll: Collectives | null = null;
  let tcpIn: Socket | null = null;
  reply({ kind: 'listening', port: listener.port, tcpPort: (tcpServer.address() as { port: number }).port });

  process.on('message', async (m: WorkerCommand) => {
    try {
      if (m.cmd === 'wire') {
        const prev = (rank - 1 + world) % world;
        const ring = await wireRing({
          rank,
          world,
          runId: 'bench',
          ringKey: BENCH_KEY,
          listener,
          prev: { host: '127.0.0.1', port: m.ports[prev] },
          timeoutMs: 10_000,
          chunkBytes,
        });
        coll = new Collectives(ring, { chunkBytes, timeoutMs: 120_000 });
        tcpIn = connect({ port: m.tcpPorts[prev], host: '127.0.0.1', onread: { buffer: tcpReadBuffer, callback: (n: number) => tcpReceived(n) } });
        await new Promise((r) => tcpIn!.once('connect', r));
        while (!tcpOut) await new Promise((r) => setTimeout(r, 5));
        (tcpOut as Socket).setNoDelay(true);
        reply({ kind: 'wired' });
      } else if (m.cmd === 'verify') {
        reply(await verify(coll!, m.length, m.dtype));
      } else if (m.cmd === 'bench') {
        reply({ kind: 'timings', results: await bench(coll!, m.bytes, m.dtype, m.iters, m.kinds) });
      } else if (m.cmd === 'tcp') {
        reply({ kind: 'tcp', timing: await tcpRing(coll!, tcpOut!, m.bytes, m.iters) });
      } else if (m.cmd === 'exit') {
        coll?.ring.close();
        tcpOut?.destroy();
        (tcpIn as Socket | null)?.destroy();
        tcpServer.close();
        await listener.close();
        process.exit(0);
      }
    } catch (err) {
      reply({ kind: 'error', message: (err as Error).stack ?? String(err) });
    }
  });
  process.on('disconnect', () => process.exit(1)); // the parent died: do not linger
}

async function verify(c: Collectives, length: number, dtype: WireDtype): Promise<WorkerReply> {
  const want = new Float32Array(length);
  for (let r = 0; r < world; r++) {
    const x = pattern(r, length);
    for (let i = 0; i < length; i++) want[i] += x[i];
  }
  if (dtype !== 'fp32') throw new Error('verify runs on fp32, where sums of small integers are exact');
  const buf = pattern(rank, length);
  const rec = await c.allReduce(buf);
  let bad = -1;
  for (let i = 0; i < length && bad < 0; i++) if (buf[i] !== want[i]) bad = i;
  return {
    kind: 'verified',
    ok: bad < 0,
    detail: bad < 0 ? 'exact' : `element ${bad}: ${buf[bad]} != ${want[bad]}`,
    payloadSent: rec.sent.payload,
    frameSent: rec.sent.frame,
  };
}

/** The benchmark's tensors, made once per size and dtype and reused by every later round (as a training loop
 *  reuses its gradient buffers): allocating 80 MiB anew per round set off a full GC inside the round. */
let made: { key: string; full: Elems; shard: Elems } | null = null; // one size at a time: the sizes only grow
function tensors(bytes: number, dtype: WireDtype): { full: Elems; shard: Elems } {
  const key = `${bytes} ${dtype}`;
  if (made?.key !== key) {
    const n = Math.max(world, Math.floor(bytes / bytesPerElement(dtype)));
    made = { key, full: emptyOf(dtype, n), shard: emptyOf(dtype, Math.ceil(n / world)) };
  }
  return made;
}

async function bench(c: Collectives, bytes: number, dtype: WireDtype, iters: number, kinds: string[]): Promise<Record<string, Timing>> {
  const { full, shard } = tensors(bytes, dtype);
  const out: Record<string, Timing> = {};
  for (const kind of kinds) {
    const run = () => (kind === 'all-reduce' ? c.allReduce(full) : kind === 'reduce-scatter' ? c.reduceScatter(full, shard) : c.allGather(shard, full));
    await run(); // warm-up
    const times: number[] = [];
    let cpu = { user: 0, system: 0 };
    let payload = 0;
    let frame = 0;
    c.takeRecords();
    for (let i = 0; i < iters; i++) {
      await c.barrier();
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const rec = await run();
      times.push((performance.now() - t0) / 1000);
      const d = process.cpuUsage(cpu0);
      cpu = { user: cpu.user + d.user, system: cpu.system + d.system };
      payload += rec.sent.payload;
      frame += rec.sent.frame;
    }
    c.takeRecords(); // the benchmark keeps its own sums
    out[kind] = { seconds: times, userMs: cpu.user / 1000 / iters, sysMs: cpu.system / 1000 / iters, overhead: payload > 0 ? (frame - payload) / payload : 0 };
  }
  return out;
}

// The baseline's reader: every read lands in one reused 1 MiB buffer (the cheapest Node can read), and
// bytes are counted cumulatively, since the previous rank may begin its next iteration before this one.
const tcpReadBuffer = new Uint8Array(1 << 20);
let tcpGot = 0;
let waiting: { target: number; resolve: () => void } | null = null;
function tcpReceived(n: number): boolean {
  tcpGot += n;
  if (waiting && tcpGot >= waiting.target) waiting.resolve();
  return true;
}

/** Every rank writes `bytes` to the next rank's plain TCP socket, 1 MiB per write, while reading as much
 *  from the previous one. */
async function tcpRing(c: Collectives, out: Socket, bytes: number, iters: number): Promise<Timing> {
  const block = Buffer.alloc(1 << 20, 7);
  const times: number[] = [];
  const start = tcpGot;
  let cpu = { user: 0, system: 0 };
  for (let it = 0; it < iters; it++) {
    await c.barrier();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const target = start + (it + 1) * bytes;
    const received = tcpGot >= target ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { target, resolve }));
    let sent = 0;
    while (sent < bytes) {
      const n = Math.min(block.byteLength, bytes - sent);
      sent += n;
      if (!out.write(n === block.byteLength ? block : block.subarray(0, n))) await new Promise((r) => out.once('drain', r));
    }
    await received;
    waiting = null;
    times.push((performance.now() - t0) / 1000);
    const d = process.cpuUsage(cpu0);
    cpu = { user: cpu.user + d.user, system: cpu.system + d.system };
  }
  return { seconds: times, userMs: cpu.user / 1000 / iters, sysMs: cpu.system / 1000 / iters, overhead: 0 };
}

main().catch((err) => {
  reply({ kind: 'error', message: (err as Error).stack ?? String(err) });
  process.exit(1);
});
