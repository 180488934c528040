// `zerowire simulate` as a user runs it: a real process, its report marked simulated with the algorithms it
// chose, its files, a LAN-style run simulated beside what it measured, and bad input refused in one line.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

const TINY = ['--compute', 'model:h100', '--model', 'llama:2,64,4,4,128,32', '--steps', '2', '--batch', '8'];
/** Two hosts, each with two 200 Gbit NICs. */
const TWO_HOSTS = ['--hosts', '2', '--nics', '2', '--nic-gbit', '200'];

describe('zerowire simulate', () => {
  it('its help lists no option a simulation has nothing to apply to (liveness, TLS, tokens, checkpoints)', async () => {
    const r = await runCli(['simulate', '--help']);
    expect(r.code).toBe(0);
    for (const o of ['--tls-cert', '--heartbeat-timeout', '--join-timeout', '--token', '--checkpoint-every', '--resume', '--preflight'])
      expect(r.stdout).not.toContain(o);
    for (const o of ['--compute', '--world', '--nic-gbit', '--scheme']) expect(r.stdout).toContain(o);
  });

  it("prints the run's report marked simulated, with NCCL's choice per collective size, and writes its files", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-sim-'));
    const [out, trace, html] = ['r.json', 't.json', 'r.html'].map((f) => join(dir, f));
    const r = await runCli(['simulate', ...TINY, '--world', '8', ...TWO_HOSTS, '--out', out, '--trace', trace, '--html', html]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^SIMULATED \(zerowire simulate/m);
    expect(r.stdout).toMatch(/2 hosts × 4 ranks, nvlink 450 GB\/s inside a host, 2 × 200 Gbit\/s NICs per host/);
    for (const s of ['DP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3', 'HSDP', 'ZeRO\\+\\+']) expect(r.stdout).toMatch(new RegExp(`^${s} +8 `, 'm'));
    expect(r.stdout).toMatch(/all-reduce +8 +2 .* (ring|tree)\/(LL|LL128|Simple) /);
    expect(r.stdout).not.toMatch(/really ran over this run's sockets/);
    // nothing framed, no socket, no arrivals to time: '-', not a 0 that reads as nothing sent or no overlap
    expect(r.stdout).toMatch(/^ZeRO-3 .* - +- .* - +[\d.-]+$/m);
    expect(r.stdout).not.toMatch(/on a common clock of the ranks/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.simulated.choices.length).toBeGreaterThan(0);
    for (const row of report.rows) expect(row.sentPerStep.payload).toBeCloseTo(row.sentPerStep.theory, 3);
    const events = JSON.parse(readFileSync(trace, 'utf8')).traceEvents as { name: string; args?: { name?: string } }[];
    const ranks = events.filter((e) => e.name === 'process_name' && /^rank /.test(e.args?.name ?? ''));
    expect(ranks.map((e) => e.args!.name)).toEqual(['rank 0 (host0)']); // one rank's steps
    expect(readFileSync(html, 'utf8')).toMatch(/simulated/);
  }, 60_000);

  it('simulates a what-if run on the links its pre-flight measured, beside what it measured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zw-sim-run-'));
    const out = join(dir, 'lan.json');
    const run = await runCli(['local', ...TINY, '--world', '2', '--scheme', 'dp,zero3', '--out', out], 120_000);
    expect(run.code, run.stderr).toBe(0);
    const r = await runCli(['simulate', '--run', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/zerowire's own ring over TCP; rates and round trips from .*lan\.json's pre-flight/);
    expect(r.stdout).toMatch(/simulated against measured/);
    expect(r.stdout).toMatch(/^DP +[\d.]+ +[\d.]+ +-?[\d.]+% /m);
    expect(r.stdout).toMatch(/^ZeRO-3 +[\d.]+ +[\d.]+ +-?[\d.]+% /m);
  }, 180_000);

  const refusals: [string, string[], RegExp][] = [
    ['a topology that cannot hold the world', ['--world', '8', '--hosts', '3'], /--hosts: 3 must divide --world 8/],
    ['no NICs', ['--world', '8', '--hosts', '2', '--nics', '0'], /--nics: 0 must be a whole number of NICs, at least 1/],
    ['a NIC rate of zero', ['--world', '8', '--hosts', '2', '--nic-gbit', '0'], /--nic-gbit: 0 must be above 0/],
    ['an unknown transport', ['--world', '8', '--transport', 'tcp'], /--transport: "tcp" is not nccl or ring/],
    ['a scheme that cannot form its groups', ['--world', '8', '--hosts', '1', '--scheme', 'hsdp'], /--scheme hsdp: /],
    [
      'a collective it does not sweep',
      ['--world', '8', '--collective', 'broadcast'],
      /--collective: "broadcast" is not all-reduce, all-gather or reduce-scatter/,
    ],
    [
      'sizes the wrong way round',
      ['--world', '8', '--collective', 'all-gather', '--min-bytes', '1G', '--max-bytes', '1M'],
      /--min-bytes 1G is above --max-bytes 1M/,
    ],
    ['a size it cannot read', ['--world', '8', '--collective', 'all-gather', '--max-bytes', 'lots'], /--max-bytes: cannot read "lots" as a size/],
    ['an option of real runs only (--resume)', ['--world', '8', '--resume', 'ck'], /^zerowire: --resume: a simulation has no processes, sockets or files/],
    ['an option of real runs only (--token)', ['--world', '8', '--token', 'abc'], /^zerowire: --token: a simulation has/],
  ];
  for (const [what, args, message] of refusals)
    it(`refuses ${what} in one line, exit 2`, async () => {
      const r = await runCli(['simulate', ...TINY, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    });

  it("places the ranks by a DeepSpeed hostfile: its slots the world, its hosts, a host's ranks as HSDP's group", async () => {
    const hostfile = join(mkdtempSync(join(tmpdir(), 'zw-sim-hosts-')), 'hostfile');
    writeFileSync(hostfile, 'node-a slots=2\nnode-b slots=2\n');
    const r = await runCli(['simulate', ...TINY, '--hostfile', hostfile, '--scheme', 'zero3,hsdp']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/on 2 hosts × 2 ranks/);
    expect(r.stdout).toMatch(/^HSDP\s+4\s/m);
    // resident model states: ZeRO-3 shards 16 B a parameter over all 4 ranks, HSDP over a host's 2
    expect(r.stdout).toMatch(/^ZeRO-3\s+4\s+\d+\s+4\.00\s/m);
    expect(r.stdout).toMatch(/^HSDP\s+4\s+\d+\s+8\.00\s/m);
    const disagree = await runCli(['simulate', ...TINY, '--hostfile', hostfile, '--world', '8']);
    expect(disagree.code).toBe(2);
    expect(disagree.stderr.trim()).toMatch(/^zerowire: --world 8 and --hostfile .*hostfile disagree: its 2 hosts have 4 slots$/);
    const hosts = await runCli(['simulate', ...TINY, '--hostfile', hostfile, '--hosts', '4']);
    expect(hosts.code).toBe(2);
    expect(hosts.stderr.trim()).toMatch(/^zerowire: --hosts 4 and --hostfile .*hostfile \(2 hosts\) disagree$/);
  });

  it("plan --need --simulate searches each scheme's least rate on the simulator, beside the closed form", async () => {
    const need = 'plan --need 10 --compute model:h100 --model llama:2,64,4,4,128,32 --world 8 --hosts 2 --simulate'.split(' ');
    const r = await runCli(need);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^simulated \(zerowire simulate: every rank's schedule/m);
    for (const s of ['ZeRO-1', 'ZeRO-3', 'HSDP']) expect(r.stdout).toMatch(new RegExp(`^${s} +([\\d.]+|never.*) `, 'm'));
    const bad = await runCli(['plan', '--compute', 'model:h100', '--model', 'llama:2,64,4,4,128,32', '--world', '8', '--simulate']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--simulate goes with --need/);
  }, 120_000);

  it('sweeps one collective over the simulated network as nccl-tests prints it', async () => {
    const r = await runCli([
      'simulate',
      '--collective',
      'all_gather',
      '--compute',
      'model:h100',
      '--world',
      '16',
      ...TWO_HOSTS,
      '--min-bytes',
      '1K',
      '--max-bytes',
      '1G',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^all-gather over 16 ranks, simulated \(no byte sent\): 2 hosts × 8 ranks, nvlink 450 GB\/s inside a host, 2 × 200 Gbit\/s NICs/m);
    const rows = [...r.stdout.matchAll(/^ *(\d+) +(\d+) +float +([\d.]+) +([\d.]+) +([\d.]+) +(ring|tree)\/(LL|LL128|Simple) +(\d+)$/gm)];
    expect(rows.map((m) => Number(m[1]))).toEqual(Array.from({ length: 21 }, (_, i) => 1024 * 2 ** i)); // 1K to 1G, doubling
    const [small, large] = [rows[0], rows[rows.length - 1]];
    expect(small[7]).toBe('LL'); // latency-bound: the low-latency protocol
    expect(large[7]).toBe('Simple');
    // at 1 GiB the bus bandwidth nears the two hosts' NICs: 2 × 25 GB/s, less the ring's latency
    const [algbw, busbw] = [Number(large[4]), Number(large[5])];
    expect(busbw).toBeGreaterThan(0.9 * 50);
    expect(busbw).toBeLessThanOrEqual(50);
    expect(busbw).toBeCloseTo((algbw * 15) / 16, 1);
    expect(r.stdout).toMatch(/^# Avg bus bandwidth {4}: [\d.]+$/m);
  }, 60_000);

  it('refuses a run whose compute is not modeled', async () => {
    const r = await runCli(['simulate', '--model', 'llama:2,64,4,4,128,32', '--world', '4']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/simulate models the compute: give --compute model:PRESET or --device FILE/);
    const sweep = await runCli(['simulate', '--collective', 'all-reduce', '--world', '16', '--hosts', '2']);
    expect(sweep.code).toBe(2);
    expect(sweep.stderr).toMatch(/--collective: name the GPU \(--compute model:PRESET or --device FILE\)/);
  });
});
