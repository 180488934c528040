// Fork N ring-worker processes, introduce them to each other and talk to them. Used by the collectives
// benchmark and by the test that runs collectives across separate OS processes.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerCommand, WorkerReply } from './ring-worker.js';

const WORKER = fileURLToPath(new URL('./ring-worker.js', import.meta.url));

export class RingProcesses {
  private constructor(private readonly children: ChildProcess[]) {}

  /** `worker` is the compiled worker script (tests running this file from source pass dist's). */
  static async start(world: number, env: Record<string, string> = {}, worker = WORKER): Promise<RingProcesses> {
    const children = Array.from({ length: world }, (_, rank) =>
      fork(worker, [], { env: { ...process.env, ...env, RANK: String(rank), WORLD_SIZE: String(world) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const procs = new RingProcesses(children);
    try {
      const listening = await procs.collect('listening');
      const ports = listening.map((m) => (m as { port: number }).port);
      const tcpPorts = listening.map((m) => (m as { tcpPort: number }).tcpPort);
      procs.broadcast({ cmd: 'wire', ports, tcpPorts });
      await procs.collect('wired');
      return procs;
    } catch (err) {
      procs.kill();
      throw err;
    }
  }

  get world(): number {
    return this.children.length;
  }

  get pids(): number[] {
    return this.children.map((c) => c.pid ?? -1);
  }

  broadcast(cmd: WorkerCommand): void {
    for (const c of this.children) c.send(cmd);
  }

  /** Send `cmd` to every rank and wait for each one's reply of `kind`. */
  async all<K extends WorkerReply['kind']>(cmd: WorkerCommand, kind: K): Promise<Extract<WorkerReply, { kind: K }>[]> {
    const replies = this.collect(kind);
    this.broadcast(cmd);
    return (await replies) as Extract<WorkerReply, { kind: K }>[];
  }

  collect(kind: WorkerReply['kind'], timeoutMs = 300_000): Promise<WorkerReply[]> {
    return Promise.all(
      this.children.map(
        (c, rank) =>
          new Promise<WorkerReply>((resolve, reject) => {
            const timer = setTimeout(() => done(new Error(`rank ${rank}: no "${kind}" reply within ${timeoutMs} ms`)), timeoutMs);
            const onMessage = (m: WorkerReply) => {
              if (m.kind === 'error') done(new Error(`rank ${rank}: ${m.message}`));
              else if (m.kind === kind) done(null, m);
            };
            const onExit = (code: number | null) => done(new Error(`rank ${rank} exited (${code}) before replying "${kind}"`));
            const done = (err: Error | null, m?: WorkerReply) => {
              clearTimeout(timer);
              c.off('message', onMessage);
              c.off('exit', onExit);
              if (err) reject(err);
              else resolve(m!);
            };
            c.on('message', onMessage);
            c.once('exit', onExit);
          }),
      ),
    );
  }

  async stop(): Promise<void> {
    const exits = this.children.map((c) => (c.exitCode !== null ? Promise.resolve() : new Promise<void>((r) => c.once('exit', () => r()))));
    for (const c of this.children) if (c.connected) c.send({ cmd: 'exit' } satisfies WorkerCommand);
    const timer = setTimeout(() => this.kill(), 5000);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  kill(): void {
    for (const c of this.children) if (c.exitCode === null) c.kill('SIGKILL');
  }
}
