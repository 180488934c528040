// The verdict on links and hosts, from summaries made to order: a slow link, a late host, and a host late
// only because the link into it is slow.
import { describe, expect, it } from 'vitest';
import { instrumentNote, networkReport, networkText } from '../../../shared/accounting/links.js';
import type { SchemeSummary } from '../../../shared/control/messages.js';
import { seeded } from '../../helpers/seed.js';

const hosts = ['a', 'b', 'c', 'd'];
const ranks = hosts.map((host, rank) => ({ rank, host }));

/** 7 steps per rank (6 counted); rank r receives 10 Mbit per step from r-1 at `mbit[r]`, and enters each of 2 collectives `late[r]` ms late
 *  (or, given per step, `late[r][t]`); its units compute `compute[r]` ms a step (30 where not given). */
function summaries(
  mbit: number[],
  late: (number | number[])[],
  of = ranks,
  compute: number[] = [],
  loopLag: number[] = [],
): Map<string, Omit<SchemeSummary, 'master'>[]> {
  const lateAt = (r: number, t: number) => (typeof late[r] === 'number' ? late[r] : (late[r][t] ?? 0));
  const steps = (r: number) =>
    [0, 1, 2, 3, 4, 5, 6].map((t) => ({
      step: t,
      stepMs: 100,
      wire: { wireMs: 10_000 / mbit[r], bytes: 1.25e6, hiddenMs: 0, hiddenBytes: 0 },
      collectives: [0, 1].map((i) => ({ entry: 1000 * t + 40 * i + lateAt(r, t), exit: 1000 * t + 40 * i + 30 })),
      units: [{ unit: 0, pass: 'forward', start: 1000 * t, end: 1000 * t + (compute[r] ?? 30) }],
      ...(loopLag.length ? { loopLagMs: loopLag[r] } : {}),
    }));
  return new Map([['dp', of.map(({ rank }) => ({ rank, steps: steps(rank) }) as unknown as Omit<SchemeSummary, 'master'>)]]);
}

describe('which link or host is slow', () => {
  it('names the links of a slow host, in the pre-flight and in the run, and blames no host', () => {
    const pre = {
      mode: 'ring' as const,
      ms: 800,
      links: [3, 0, 1, 2].map((from, to) => ({
        from,
        to,
        mbit: to === 2 || to === 3 ? 95 : 940,
        mbitMulti: to === 2 || to === 3 ? 90 : 950,
        streams: 4,
        rttMs: 0.3,
      })),
    };
    const n = networkReport(pre, ranks, summaries([940, 930, 100, 98], [0, 0, 0, 30]));
    expect(n.slowProbed.map((l) => `${l.from}->${l.to}`)).toEqual(['1->2', '2->3']);
    expect(n.slowAchieved.map((l) => `${l.from}->${l.to}`)).toEqual(['1->2', '2->3']);
    expect(n.blame.join('\n')).toMatch(
      /during the run, link: 1→2 \(b→c\) 100 Mbit\/s, 2→3 \(c→d\) 98\.0 Mbit\/s, where the links between hosts achieved a median 930: every slow link touches host c$/,
    );
    expect(n.blame.join('\n')).not.toMatch(/entered collectives/); // d is late because its data comes through c
  });

  it('blames a late host and no link when every link is alike', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, 0, 25, 0]));
    expect(n.preflight).toBeNull();
    expect(n.slowAchieved).toEqual([]);
    expect(n.blame).toEqual([
      "host c's ranks entered collectives 25.0 ms late per step (median of 6 steps, late in 6; a step: 100.0 ms): its compute, not the network",
    ]);
  });

  it('a late host whose own outgoing link looks slow: its compute, not the link', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 300], [0, 0, 25, 0]));
    expect(n.blame).toHaveLength(1);
    expect(n.blame[0]).toMatch(/host c's ranks .* its compute, not the network \(its 2→3 \(c→d\) carried less in fits and starts/);
  });

  it('a late host whose incoming link looks slow, later than that link accounts for: its compute', () => {
    // 1→2 at 500 Mbit/s delays c's data by about 9 ms a step; c is 50 ms late into each collective.
    const n = networkReport(null, ranks, summaries([940, 930, 500, 945], [0, 0, 50, 0]));
    expect(n.blame).toHaveLength(1);
    expect(n.blame[0]).toMatch(/host c's ranks .* 50\.0 ms late .* its compute, not the network \(its 1→2 \(b→c\) carried less/);
  });

  it('a host late every step is blamed, though another was much later in one step (a busy machine)', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, [0, 0, 60, 0, 0], 25, 0]));
    expect(n.lateness.map((h) => [h.ms, h.lateSteps])).toEqual([
      [0, 0],
      [0, 1],
      [25, 6],
      [0, 0],
    ]);
    expect(n.blame).toEqual([
      "host c's ranks entered collectives 25.0 ms late per step (median of 6 steps, late in 6; a step: 100.0 ms): its compute, not the network",
    ]);
  });

  it('one stall in one step convicts no host, however long (the false blame under load)', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, 0, [0, 0, 400, 0, 0], 0]));
    expect(n.lateness.find((h) => h.host === 'c')).toMatchObject({ host: 'c', ms: 0, lateSteps: 1, steps: 6 });
    expect(n.blame).toEqual(['no link or host stands out']);
  });

  it('a host late in three steps of six is late in no majority: not named', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, 0, [0, 0, 40, 40, 40, 0, 0], 0]));
    expect(n.lateness.find((h) => h.host === 'c')).toMatchObject({ ms: 20, lateSteps: 3 }); // the median of 0, 0, 0, 40, 40, 40
    expect(n.blame).toEqual(['no link or host stands out']);
  });

  it('lateness within what the clocks could disagree by is not counted', () => {
    const sums = summaries([940, 930, 950, 945], [0, 0, 30, 0]); // 30 ms a step: over what matters (20)
    expect(networkReport(null, ranks, sums).blame).toEqual([expect.stringMatching(/^host c's ranks entered collectives 30\.0 ms late/)]);
    for (const s of sums.get('dp')!) (s as { clock: { offsetMs: number; uncertaintyMs: number } }).clock = { offsetMs: 0, uncertaintyMs: 15 };
    const n = networkReport(null, ranks, sums);
    expect(n.lateClockMs).toBe(30);
    expect(n.lateness.map((h) => h.ms)).toEqual([0, 0, 0, 0]);
    expect(n.blame).toEqual(['no link or host stands out']);
  });

  it('fewer than 5 counted steps: lateness is not judged, and the verdict says so', () => {
    const short = new Map([...summaries([940, 930, 950, 945], [0, 0, 25, 0])].map(([k, v]) => [k, v.map((s) => ({ ...s, steps: s.steps.slice(0, 5) }))]));
    const n = networkReport(null, ranks, short);
    expect(n.blame).toEqual(['no link stands out; too few steps to judge lateness (4 counted, 5 needed)']);
  });

  it('two hosts: one late in every step is named; a slow link into it explains it instead', () => {
    const two = ranks.slice(0, 2);
    const late = networkReport(null, two, summaries([940, 930], [0, 25], two));
    // b is compared with a, not with the midpoint of the two: its whole lag, once per step (not per collective)
    expect(late.lateness.map((h) => h.ms)).toEqual([0, 25]);
    expect(late.blame).toEqual([expect.stringMatching(/^host b's ranks entered collectives 25\.0 ms late per step/)]);
    // b's data arrives over a link at a tenth of the other's rate, 90 ms a step later than it would at 940.
    const behind = networkReport(null, two, summaries([940, 94], [0, 25], two));
    expect(behind.blame.join(' ')).not.toMatch(/entered collectives/);
  });

  it('a host short of CPU reads its links in fits and starts: the link into it looks slow by all its lateness, but its compute says it was the host (a loaded CI run)', () => {
    // c is 60 ms late; 1→2 into it at 150 Mbit/s would account for 56 ms of that; c computed 90 ms longer than the others.
    const starved = networkReport(null, ranks, summaries([940, 930, 150, 945], [0, 0, 60, 0], ranks, [30, 30, 120, 30]));
    expect(starved.lateness.find((h) => h.host === 'c')).toMatchObject({ ms: 60, ownMs: 90 });
    expect(starved.blame).toEqual([
      expect.stringMatching(
        /^host c's ranks entered collectives 60\.0 ms late .*; its compute 90\.0 ms longer than the other hosts'\): its compute, not the network \(its 1→2 \(b→c\) carried less/,
      ),
    ]);
    // Its compute as fast as the others' but its event loop held up 100 ms where theirs was about 10 (a CPU quota's
    // stall falls where it falls): the host.
    const stalled = networkReport(null, ranks, summaries([940, 930, 150, 945], [0, 0, 60, 0], ranks, [], [10, 12, 100, 9]));
    expect(stalled.lateness.find((h) => h.host === 'c')).toMatchObject({ ownMs: 0, stallMs: 90 });
    expect(stalled.blame).toEqual([
      expect.stringMatching(/^host c's .*; its event loop held up 90\.0 ms longer than the other hosts'\): its compute, not the network/),
    ]);
    // The same lateness and link with c computing as fast as the others, its loop as free: the link.
    const behind = networkReport(null, ranks, summaries([940, 930, 150, 945], [0, 0, 60, 0], ranks, [], [10, 12, 11, 9]));
    expect(behind.blame.join(' ')).not.toMatch(/entered collectives/);
    expect(behind.blame.join(' ')).toMatch(/during the run, link: 1→2 \(b→c\) 150 Mbit\/s/);
  });

  it("a slow host's ring neighbour late in every step too, by a fifth as much: the slow host is named (a loaded CI run: 139.8 and 41.6 ms)", () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, 20, 60, 0]));
    expect(n.lateness.map((h) => [h.host, h.ms, h.lateSteps])).toEqual([
      ['a', 0, 0],
      ['b', 20, 0], // never later than c's spread: the bar is the other hosts' own
      ['c', 60, 6],
      ['d', 0, 0],
    ]);
    expect(n.blame).toEqual([expect.stringMatching(/^host c's ranks entered collectives 60\.0 ms late per step .*: its compute, not the network$/)]);
  });

  it("a slow host's neighbour waiting for it, late by more than half as much (0.51 in a CI run): named all the same where only the slow host's loop stalled; neither where both did", () => {
    const late = [0, 36, 70, 0]; // b waits for c's data
    const stalled = networkReport(null, ranks, summaries([940, 930, 950, 945], late, ranks, [], [10, 11, 85, 9]));
    expect(stalled.blame).toEqual([
      expect.stringMatching(/^host c's ranks entered collectives 70\.0 ms late per step .*its event loop held up 75\.0 ms longer/),
    ]);
    const both = networkReport(null, ranks, summaries([940, 930, 950, 945], late, ranks, [], [10, 80, 85, 9]));
    expect(both.blame.join(' ')).not.toMatch(/entered collectives/);
    const unmeasured = networkReport(null, ranks, summaries([940, 930, 950, 945], late));
    expect(unmeasured.blame.join(' ')).not.toMatch(/entered collectives/); // without the loop's figures, the ratio rule stands
  });

  it("a host late by chance, its compute and event loop as the other's (a healthy 2 x 2 CI run: 4.6 ms of a 17 ms step in 4 of 7): nobody", () => {
    const two = ranks.slice(0, 2);
    const late = [0, [0, 30, 30, 30, 30, 0, 0]];
    const measured = networkReport(null, two, summaries([940, 930], late, two, [], [5, 5]));
    expect(measured.lateness.find((h) => h.host === 'b')).toMatchObject({ lateSteps: 4, own: false, measured: true });
    expect(measured.blame.join(' ')).not.toMatch(/entered collectives/);
    // An older report without the loop's figures: the link's share decides, as before.
    expect(networkReport(null, two, summaries([940, 930], late, two)).blame.join(' ')).toMatch(/^host b's ranks entered collectives/);
  });

  const rng = seeded();
  it(`a busy machine's jitter names nobody; a host slower by what matters on top of it is named (seed ${rng.seed})`, () => {
    const jitter = () => Array.from({ length: 7 }, () => rng.int(21)); // 0-20 ms into each step, every host: twice what matters
    for (let trial = 0; trial < 20; trial++) {
      const healthy = networkReport(null, ranks, summaries([940, 930, 950, 945], hosts.map(jitter)));
      expect(healthy.blame, `trial ${trial}: ${JSON.stringify(healthy.lateness)}`).toEqual(['no link or host stands out']);
      const slow = rng.int(4);
      const late = hosts.map((_, r) => jitter().map((ms) => ms + (r === slow ? 40 : 0)));
      const n = networkReport(null, ranks, summaries([940, 930, 950, 945], late));
      expect(n.blame, `trial ${trial}: ${JSON.stringify(n.lateness)}`).toEqual([
        expect.stringMatching(new RegExp(`^host ${hosts[slow]}'s ranks entered collectives`)),
      ]);
    }
  });

  it('two hosts about as late: neither stands out, and neither is blamed', () => {
    const n = networkReport(null, ranks, summaries([940, 930, 950, 945], [0, 22, 25, 0]));
    expect(n.blame).toEqual(['no link or host stands out']);
  });

  it('hosts of two ranks: links between hosts are judged against each other, not against loopback', () => {
    const paired = ['a', 'a', 'b', 'b', 'c', 'c'].map((host, rank) => ({ rank, host }));
    // Into ranks 0, 2, 4 from another host (5→0, 1→2, 3→4); into 1, 3, 5 from the same host, at loopback's rate.
    const n = networkReport(null, paired, summaries([940, 9000, 950, 9100, 100, 8900], [0, 0, 0, 0, 0, 0], paired));
    expect(n.slowAchieved.map((l) => `${l.from}->${l.to}`)).toEqual(['3->4']);
    expect(n.blame.join('\n')).toMatch(/during the run, link: 3→4 \(b→c\) 100 Mbit\/s, where the links between hosts achieved a median 940$/); // one link: no host to single out
    // Two hosts of two: two links between hosts, two inside; neither kind has enough links to single one out.
    const two = paired.slice(0, 4);
    const pre = {
      mode: 'ring' as const,
      ms: 900,
      links: [3, 0, 1, 2].map((from, to) => ({ from, to, mbit: to % 2 ? 7500 : to ? 96 : 94, mbitMulti: 0, streams: 4, rttMs: 0.3 })),
    };
    const n2 = networkReport(pre, two, summaries([100, 9000, 100, 9100], [0, 0, 0, 0], two));
    expect([n2.slowProbed, n2.slowAchieved]).toEqual([[], []]);
    expect(networkText(n2)).toContain(
      'links between hosts (the better of 1 and 4 streams): 3→0 (b→a) 94.0, 1→2 (a→b) 96.0 Mbit/s (fewer than 3: none is singled out)',
    );
  });

  it("a loopback ring is not judged: its rates are the cores' share, however unlike (npm start on 2 cores read 2389 to 15485)", () => {
    const loop = [0, 1, 2, 3].map((rank) => ({ rank, host: '127.0.0.1' }));
    const pre = {
      mode: 'ring' as const,
      ms: 700,
      links: [3, 0, 1, 2].map((from, to) => ({
        from,
        to,
        mbit: [2389, 3922, 9000, 4516][to],
        mbitMulti: [15485, 3100, 12000, 4000][to],
        streams: 4,
        rttMs: 0.3,
      })),
    };
    const n = networkReport(pre, loop, summaries([22000, 6000, 21000, 20000], [0, 0, 0, 0], loop));
    expect([n.slowProbed, n.slowAchieved]).toEqual([[], []]);
    const text = networkText(n);
    expect(text).toContain(
      "links inside a host (the better of 1 and 4 streams): median 12000 Mbit/s, slowest 0→1 (127.0.0.1) 3922 (67% below the median); not judged: a copy between processes on one machine moves at the pace of the cores it gets, not a network's",
    );
    expect(text.at(-1)).toBe('verdict: no link or host stands out');
    expect(text.join('\n').match(/median/g)).toHaveLength(2); // the kind's line names its one median (twice: the figure and "below the median")
  });

  it('an achieved rate above what the pre-flight measured on a link between hosts is marked and explained', () => {
    const pre = { mode: 'ring' as const, ms: 800, links: [3, 0, 1, 2].map((from, to) => ({ from, to, mbit: 95, mbitMulti: 96, streams: 4, rttMs: 0.3 })) };
    const text = networkText(networkReport(pre, ranks, summaries([97, 131, 145, 99], [0, 0, 0, 0])));
    expect(text).toContain('achieved during the run (payload while frames arrived), Mbit/s: 3→0 (d→a) 97.0, 0→1 (a→b) 131*, 1→2 (b→c) 145*, 2→3 (c→d) 99.0');
    expect(text.join('\n')).toMatch(/^\* above what the pre-flight measured on that link: a shaper's burst/m);
  });

  it('without training (zerowire links) there is no lateness line', () => {
    const pre = { mode: 'all-pairs' as const, ms: 800, links: [3, 0, 1, 2].map((from, to) => ({ from, to, mbit: 95, mbitMulti: 96, streams: 4, rttMs: 0.3 })) };
    const n = networkReport(pre, ranks, new Map());
    expect(n.lateness).toEqual([]);
    expect(networkText(n).join('\n')).not.toMatch(/late entering/);
  });

  it('says so when nothing stands out', () => {
    expect(networkReport(null, ranks, summaries([940, 930, 950, 945], [1, 0, 1, 0])).blame).toEqual(['no link or host stands out']);
  });
  it("prints plain TCP beside the transport, and names the instrument's ceiling where the transport is under 80% of it", () => {
    const two = ranks.slice(0, 2);
    const probe = (from: number, to: number, ours: number, plain: number) => ({
      from,
      to,
      mbit: ours * 0.6,
      mbitMulti: ours,
      streams: 4,
      rttMs: 0.3,
      plainMbit: plain * 0.8,
      plainMbitMulti: plain,
    });
    const fast = { mode: 'all-pairs' as const, ms: 1200, links: [probe(0, 1, 7100, 15300), probe(1, 0, 11900, 19300)] };
    const n = networkReport(fast, two, new Map());
    const text = networkText(n);
    expect(text[0]).toMatch(/plain TCP beside it: the same link without WebSocket or msgpack/);
    expect(text[0]).toContain('0→1 (a→b) 4260/7100 (plain TCP 12240/15300)');
    expect(instrumentNote(n)).toBe(
      "instrument: zerowire's transport moved 46-61% of what plain TCP moved on 2 of 2 links between hosts (the better of 1 and 4 streams: 7.1-11.9 Gbit/s against 15.3-19.3 Gbit/s): collectives above 7.1 Gbit/s measure zerowire (its framing, msgpack and the cores it gets), not the network; more streams or free cores would lift it",
    );
    expect(text).toContain(instrumentNote(n));
    expect(instrumentNote(n, 10)).toMatch(
      /; with --link-scale 10 each link stands for 10x what it carried: the emulated rate is 10x zerowire's pace \(71\.0-119\.0 Gbit\/s\), not 10x the network's \(153\.0-193\.0 Gbit\/s\)$/,
    );
    // At 1 Gbit both read the wire: no note. 79.9% is under the bar, and said as 79%, not 80%.
    const wire = { mode: 'all-pairs' as const, ms: 1100, links: [probe(0, 1, 955, 956), probe(1, 0, 955, 955)] };
    expect(instrumentNote(networkReport(wire, two, new Map()))).toBeNull();
    const edge = { mode: 'all-pairs' as const, ms: 1100, links: [probe(0, 1, 799, 1000), probe(1, 0, 955, 955)] };
    expect(instrumentNote(networkReport(edge, two, new Map()))).toMatch(/moved 79% of what plain TCP moved on 1 of 2 links/);
    // Loopback links are not a network: never noted. Older reports without plain TCP: nothing said.
    const loop = [0, 1].map((rank) => ({ rank, host: '127.0.0.1' }));
    expect(instrumentNote(networkReport(fast, loop, new Map()))).toBeNull();
    const old = { ...fast, links: fast.links.map(({ plainMbit: _a, plainMbitMulti: _b, ...l }) => l) };
    expect(networkText(networkReport(old, two, new Map()))[0]).not.toMatch(/plain TCP/);
  });
});
