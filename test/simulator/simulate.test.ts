// The simulator: the ranks' own schedule in virtual time, each collective the network model's time exactly,
// bytes equal to the theory's, a stalled schedule named, shared links split fairly.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { smallConfig } from '../helpers/config.js';
import { simulate } from '../../simulator/simulate.js';
import { VirtualClock } from '../../simulator/virtual-clock.js';
import { Fluid } from '../../simulator/network/fluid.js';
import { topology } from '../helpers/topology.js';
import type { Topology } from '../../simulator/network/topology.js';
import { Network } from '../../simulator/network/network.js';
import { SimGroup } from '../../simulator/sim-collectives.js';
import { withClock } from '../../shared/time/clock.js';

const quiet = pino({ level: 'silent' });

/** 2 hosts × 2 ranks on zerowire's ring: a slow link between hosts, a fast one inside. */
const LAN = topology({
  transport: 'ring',
  intra: { kind: 'loopback', GBps: 1000, latencyUs: 0 },
  nicGBps: 0.01, // 80 Mbit/s: 1e4 bytes per ms
  hopUs: 100,
});

const whatIf = (o: Parameters<typeof smallConfig>[0]) => smallConfig({ model: '64,96,32', compute: 'model:h100', batch: 8, steps: 2, wireDtype: 'fp32', ...o });

describe('simulate', () => {
  it('gives each collective the ring its time: steps × the hop, its bytes at the slowest link, shared with the others in flight', async () => {
    const sim = await simulate(whatIf({ scheme: 'dp', overlap: 'off' }), LAN, quiet);
    const step = sim.summaries.get('dp')![0].steps[1];
    // DDP's one bucket: both units' all-reduces start together when it closes (awaited at once: overlap off)
    expect(step.collectives.length).toBe(2);
    expect(step.collectives[0].entry).toBeCloseTo(step.collectives[1].entry, 9);
    // an all-reduce: 2(N−1) = 6 steps of 0.1 ms, and each rank's segment (padded/4 fp32 values) 6 times over the
    // 80 Mbit link (1e4 B/ms), which the two share until the smaller is through
    const [small, large] = [...step.collectives].sort((a, b) => a.padded - b.padded).map((c) => ({ ms: c.ms, bytes: 6 * (c.padded / 4) * 4 }));
    expect(small.ms).toBeCloseTo(6 * 0.1 + (2 * small.bytes) / 1e4, 6);
    expect(large.ms).toBeCloseTo(6 * 0.1 + (small.bytes + large.bytes) / 1e4, 6);
    expect(step.exposedMs).toBeCloseTo(large.ms, 6); // nothing else overlaps them
  });

  it("runs one group's collectives one after another on NCCL's transport (one stream per process group), side by side on zerowire's ring", async () => {
    // two equal all-gathers entered at once by both ranks of a 2-host group: NCCL ends them at T and 2T (the
    // second starts when the first is done); zerowire's ring shares the link, so both end at about 2T
    const ends = async (t: Topology) => {
      const clock = new VirtualClock();
      const group = new SimGroup('main', [0, 2], new Network(t));
      const call = { kind: 'all-gather' as const, segmentBytes: 1e6, steps: 1 };
      const out: number[] = [];
      const rank = () => [0, 1].map((coll) => group.enter(coll, call).then(() => out.push(clock.now())));
      await withClock(clock, () => clock.drive(Promise.all([...rank(), ...rank()]), () => group.waiting().join('; ')));
      return [out[0], out[2]]; // each collective's end (both ranks leave it together)
    };
    const [n1, n2] = await ends(topology({ nicGBps: 0.1 }));
    expect(n2).toBeCloseTo(2 * n1, 6);
    const [r1, r2] = await ends(topology({ nicGBps: 0.1, transport: 'ring', hopUs: 0 }));
    expect(r1).toBeCloseTo(r2, 6);
  });

  it("sends every scheme's theory bytes, on a schedule whose collectives pair up", async () => {
    const sim = await simulate(whatIf({ scheme: 'dp,zero1,zero2,zero3,hsdp', accumulate: 2 }), LAN, quiet);
    expect(sim.report.rows.map((r) => r.scheme)).toEqual(['dp', 'zero1', 'zero2', 'zero3', 'hsdp']);
    for (const r of sim.report.rows) {
      expect(r.sentPerStep.payload, r.title).toBeCloseTo(r.sentPerStep.theory, 6);
      expect(r.split, r.title).not.toBeNull(); // every rank's collectives line up
      expect(r.time.stepMs, r.title).toBeGreaterThan(r.time.computeMs);
    }
    expect(sim.report.simulated?.choices.every((c) => c.algorithm === "zerowire's ring")).toBe(true);
  });

  it("ZeRO++ under checkpointing crosses the hosts only in the forward: a recompute's gather and a regather read hpZ's host copy", async () => {
    const run = async (o: { recompute?: boolean; recomputeRegather?: boolean }) => {
      const sim = await simulate(whatIf({ model: 'gpt:2,64,4,32', scheme: 'zeropp', wireDtype: 'bf16', ...o }), LAN, quiet);
      const r = sim.report.rows[0];
      expect(r.sentPerStep.payload, JSON.stringify(o)).toBeCloseTo(r.sentPerStep.theory, 6);
      expect(r.interHost.measured, JSON.stringify(o)).toBeCloseTo(r.interHost.theory, 6);
      return r;
    };
    const [plain, recomputed, again] = [await run({}), await run({ recompute: true }), await run({ recompute: true, recomputeRegather: true })];
    expect(recomputed.interHost.measured).toBeCloseTo(plain.interHost.measured, 6);
    expect(again.interHost.measured).toBeCloseTo(plain.interHost.measured, 6);
    expect(again.intraHost.measured).toBeGreaterThan(recomputed.intraHost.measured); // the regather, on the host
  });

  it('names the collectives a stalled schedule waits in, instead of hanging', async () => {
    const clock = new VirtualClock();
    const never = new Promise<void>(() => undefined);
    await expect(withClock(clock, () => clock.drive(never, () => 'main #3 (all-gather, 1 of 2 entered)'))).rejects.toThrow(
      /stalled.*main #3 \(all-gather, 1 of 2 entered\)/,
    );
  });

  it('splits a full link evenly between the transfers on it, and gives the rest back when one ends', async () => {
    const clock = new VirtualClock();
    const fluid = new Fluid(() => 1000); // bytes per ms
    const ends: number[] = [];
    const on = (bytes: number) => ({ bytes, capBytesPerMs: Infinity, demands: new Map([['nic:0', 1]]) });
    await withClock(clock, () =>
      clock.drive(
        Promise.all([fluid.transfer(on(1000)).then(() => ends.push(clock.now())), fluid.transfer(on(3000)).then(() => ends.push(clock.now()))]),
        () => '',
      ),
    );
    // both at 500 B/ms until the first is through (2 ms), then the second alone at 1000 B/ms for its last 2000 B
    expect(ends[0]).toBeCloseTo(2, 9);
    expect(ends[1]).toBeCloseTo(4, 9);
  });
});
