// The environment launchers set (torchrun, PyTorchJob: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT; an
// Indexed Job: JOB_COMPLETION_INDEX), with real coordinator and rank processes.
import { describe, expect, it } from 'vitest';
import { rankIdentity } from '../../cli/platform-env.js';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';

const RUN = ['--scheme', 'dp', '--model', '8,8', '--steps', '2', '--batch', '6', '--samples', '12', '--log-level', 'info'];
const RANK = ['rank', '--peer-host', '127.0.0.1', '--log-level', 'info'];

async function coordinator(world: number) {
  const c = startCli(['coordinator', '--world', String(world), '--host', '127.0.0.1', '--port', '0', ...RUN]);
  let err = '';
  c.child.stderr!.on('data', (d) => (err += d));
  expect(await eventually(() => /waiting for/.test(err), 10_000)).toBe(true);
  const port = logLines(err).find((l) => /waiting for/.test(String(l.msg)))!.port as number;
  return { ...c, port, err: () => err };
}

describe('launcher environment', () => {
  it('ranks keep the ids RANK / JOB_COMPLETION_INDEX ask for, find the coordinator from MASTER_ADDR/MASTER_PORT, and a second ask for an id is refused', async () => {
    const c = await coordinator(3);
    const master = { MASTER_ADDR: '127.0.0.1', MASTER_PORT: String(c.port), WORLD_SIZE: '3' };
    // Join in the order 2, 1, 0: the ids are theirs, not the join order.
    const r2 = startCli(RANK, { ...master, RANK: '2' });
    expect(await eventually(() => logLines(c.err()).some((l) => l.msg === 'rank 2 joined'), 10_000)).toBe(true);
    const dup = await runCli(RANK, 15_000, { ...master, JOB_COMPLETION_INDEX: '2' });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/refused: rank 2 is already taken by \S+ pid \d+; each rank's RANK \/ JOB_COMPLETION_INDEX \/ --rank-id must be unique/);
    const r1 = startCli(RANK, { ...master, JOB_COMPLETION_INDEX: '1' });
    expect(await eventually(() => logLines(c.err()).some((l) => l.msg === 'rank 1 joined'), 10_000)).toBe(true);
    const r0 = startCli([...RANK, '--rank-id', '0'], master);
    const [done, ...ranks] = await Promise.all([c.done, r2.done, r1.done, r0.done]);
    expect(done.code, done.stderr).toBe(0);
    for (const r of ranks) expect(r.code).toBe(0);
    const ring = logLines(done.stderr).find((l) => /^ring: /.test(String(l.msg)))!.ring as { rank: number; pid: number }[];
    expect(ring.map((x) => x.pid)).toEqual([r0.child.pid, r1.child.pid, r2.child.pid]);
    expect(logLines(done.stderr).some((l) => /refused a connection .* rank 2 is already taken/.test(String(l.msg)))).toBe(true);
  }, 60_000);

  it('a rank whose WORLD_SIZE differs from the run, or whose id is out of range, is refused with the numbers', async () => {
    const c = await coordinator(2);
    const env = { MASTER_ADDR: '127.0.0.1', MASTER_PORT: String(c.port) };
    const wrongWorld = await runCli(RANK, 15_000, { ...env, WORLD_SIZE: '3' });
    expect(wrongWorld.stderr).toMatch(/refused: this rank expects WORLD_SIZE 3, the run has 2 ranks/);
    const outside = await runCli(RANK, 15_000, { ...env, RANK: '5' });
    expect(outside.stderr).toMatch(/refused: this rank asks for rank 5, but the run has 2 ranks \(0\.\.1\)/);
    c.child.kill('SIGTERM');
    await c.done;
  }, 60_000);

  it('sources that disagree stop the rank before it connects (exit 2)', async () => {
    const both = await runCli(['rank', '--coordinator', 'ws://127.0.0.1:1'], 10_000, { RANK: '1', JOB_COMPLETION_INDEX: '2' });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/rank id: RANK=1 and JOB_COMPLETION_INDEX=2 disagree; set one of them/);
    const where = await runCli(['rank', '--coordinator', 'ws://a:1'], 10_000, { MASTER_ADDR: 'b', MASTER_PORT: '2' });
    expect(where.code).toBe(2);
    expect(where.stderr).toMatch(/--coordinator ws:\/\/a:1 and MASTER_ADDR\/MASTER_PORT \(ws:\/\/b:2\) disagree/);
    const none = await runCli(['rank'], 10_000, {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--coordinator is required \(or MASTER_ADDR and MASTER_PORT/);
  }, 30_000);

  it('reads ids, sizes and addresses strictly', () => {
    expect(rankIdentity({}, { MASTER_ADDR: 'fd00::1', MASTER_PORT: '29500', RANK: '3', WORLD_SIZE: '4' })).toEqual({
      coordinator: 'ws://[fd00::1]:29500',
      rankId: 3,
      worldSize: 4,
    });
    expect(rankIdentity({ coordinator: 'ws://h:7070/' }, { MASTER_ADDR: 'h' }).coordinator).toBe('ws://h:7070/');
    expect(() => rankIdentity({ coordinator: 'ws://h:1' }, { RANK: '-1' })).toThrow(/RANK=-1: expected an integer >= 0/);
    expect(() => rankIdentity({ coordinator: 'ws://h:1' }, { RANK: '4', WORLD_SIZE: '4' })).toThrow(/rank id 4 \(RANK\) is not below WORLD_SIZE=4/);
    expect(() => rankIdentity({}, { MASTER_PORT: '1' })).toThrow(/MASTER_PORT is set without MASTER_ADDR/);
    // A rank that runs TLS reaches MASTER_ADDR over wss://, and says so when told ws://.
    expect(rankIdentity({ tls: true }, { MASTER_ADDR: 'zerowire-coordinator', MASTER_PORT: '7070' }).coordinator).toBe('wss://zerowire-coordinator:7070');
    expect(() => rankIdentity({ tls: true, coordinator: 'ws://h:7070' }, {})).toThrow(
      /this rank runs TLS \(--tls-cert\), so the coordinator is wss:\/\/, not ws:\/\//,
    );
  });
});
