// The simulator: the ranks' own schedule in virtual time, each collective the network model's time exactly,
// bytes equal to the theory's, a stalled schedule named, shared links split fairly.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { smallConfig } from '../helpers/config.js';
import { simulate } from '../../simulator/simulate.js';
import { VirtualClock } from '../../simulator/virtual-clock.js';
import { Fluid } from '../../simulator/network/fluid.js';
import { topology } from '../helpers/topology.js';
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
