// Which link or host is slow. Three readings, side by side: the pre-flight's measured rate of each link
// (transport/link-probe.ts), the rate each ring link achieved during the run (its bytes over the time its
// frames were arriving), and how late each host's ranks entered collectives. A slow link shows in the first
// two; a slow host in the third and in neither of the others: the report says which it was.
import type { SchemeSummary } from '../control/messages.js';
import type { LinkProbe } from '../transport/link-probe.js';
import { judgeLateness, type HostLateness } from './lateness.js';

export interface Preflight {
  mode: 'off' | 'ring' | 'all-pairs';
  ms: number; // the longest any rank spent on it
  links: LinkProbe[];
}

interface RankHost {
  rank: number;
  host: string;
}

interface MeasuredLink {
  from: number; // ranks
  to: number;
  fromHost: string;
  toHost: string;
  mbit: number;
}

/** A ring link during the run, with how long its frames were arriving per step. */
type AchievedLink = MeasuredLink & { msPerStep: number };

export interface NetworkReport {
  preflight: (Omit<Preflight, 'links'> & { links: (LinkProbe & { fromHost: string; toHost: string })[] }) | null;
  capacity: MeasuredLink[]; // each pre-flight link's rate: the better of one stream and several
  slowProbed: MeasuredLink[]; // pre-flight links between hosts far below their median
  achieved: AchievedLink[]; // each ring link during the run: payload Mbit/s while its frames were arriving
  slowAchieved: AchievedLink[];
  lateness: HostLateness[]; // how late each host's ranks entered collectives, beyond the clocks' uncertainty
  lateClockMs: number; // what two ranks' clocks could disagree by at most: not counted as lateness
  blame: string[]; // sentences: which link or host, and why
}

/** A link is slow below this share of the median link. */
const SLOW_LINK = 0.6;
/** Fewer links of a kind than this, and none is singled out: two links cannot say which of them is odd. */
const JUDGED_AMONG = 3;

const mbit = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
/** A link by its ranks and hosts: '1→2 (hostB→hostC)', or '1→2 (hostB)' inside one host. */
const linkName = (l: MeasuredLink) => `${l.from}→${l.to} (${l.fromHost === l.toHost ? l.fromHost : `${l.fromHost}→${l.toHost}`})`;

/** Links between two hosts cross a network; a link inside a host (loopback, or a host's own bridge) is a copy
 *  between processes on one machine, whose rate is the share of the cores it got, not a network's. The two
 *  kinds are never judged against each other, and links inside a host are not judged at all: on a 2-core
 *  machine running 4 ranks, one loopback link reads a third of another from scheduling alone. */
const crosses = (l: MeasuredLink) => l.fromHost !== l.toHost;
const KIND_NAME = { between: 'links between hosts', inside: 'links inside a host' } as const;
type LinkKind = keyof typeof KIND_NAME;
const kindOf = (l: MeasuredLink): LinkKind => (crosses(l) ? 'between' : 'inside');

/** The median of a kind's rates as every line of the report prints it: the middle link (the upper of the two
 *  middle ones for an even count), so that it is a rate some link had, never the mean of two unlike links. */
function kindMedian(rates: readonly number[]): number {
  if (!rates.length) return 0;
  const sorted = [...rates].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Links far below the median of the links between hosts (three at least). */
function slowOnes<L extends MeasuredLink>(links: L[]): L[] {
  const between = links.filter(crosses);
  if (between.length < JUDGED_AMONG) return [];
  const m = kindMedian(between.map((l) => l.mbit));
  return between.filter((l) => l.mbit < SLOW_LINK * m);
}

/** The median of the links of the slow ones' kind (between hosts): the same figure the kind's line prints. */
const kindMbit = (all: MeasuredLink[]) => kindMedian(all.filter(crosses).map((l) => l.mbit));

/** How much later per step a host's data arrived over its incoming links between hosts than at the others'
 *  rate: the median of that kind where there are enough links to have one, else the faster of the two (on two
 *  hosts a slow link into one of them would otherwise pass for that host's own lateness). */
function delayInto(host: string, all: AchievedLink[]): number {
  const between = all.filter(crosses);
  const others = between.length >= JUDGED_AMONG ? kindMbit(all) : Math.max(0, ...between.map((l) => l.mbit));
  return between.filter((l) => l.toHost === host).reduce((ms, l) => ms + l.msPerStep * Math.max(0, 1 - l.mbit / others), 0);
}

/** What the late host's ranks did longer than the others' (compute, a held-up event loop), for its verdict. */
function stalledText(h: HostLateness): string {
  const parts = [h.ownMs > 0 ? `its compute ${h.ownMs.toFixed(1)} ms` : '', h.stallMs > 0 ? `its event loop held up ${h.stallMs.toFixed(1)} ms` : ''].filter(
    Boolean,
  );
  return parts.length ? `; ${parts.join(', ')} longer than the other hosts'` : '';
}

/** The host every slow link touches, if they share one. */
function commonHost(links: MeasuredLink[]): string | null {
  if (!links.length) return null;
  const hosts = [links[0].fromHost, links[0].toHost].filter((h) => links.every((l) => l.fromHost === h || l.toHost === h));
  return hosts.length === 1 ? hosts[0] : null;
}

/** Each main-ring link r-1 → r over every scheme's steps (the first left out when there are more). */
function achievedRates(ranks: RankHost[], summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>): AchievedLink[] {
  const world = ranks.length;
  if (world < 2) return [];
  return ranks.flatMap(({ rank, host }) => {
    let bytes = 0;
    let ms = 0;
    let n = 0;
    for (const sums of summaries.values()) {
      const steps = sums[rank]?.steps ?? [];
      for (const s of steps.length > 1 ? steps.slice(1) : steps) {
        bytes += s.wire.bytes;
        ms += s.wire.wireMs;
        n++;
      }
    }
    const from = (rank - 1 + world) % world;
    return ms > 0 ? [{ from, to: rank, fromHost: ranks[from].host, toHost: host, mbit: (bytes * 8) / (ms * 1000), msPerStep: ms / n }] : [];
  });
}

export function networkReport(
  preflight: Preflight | null,
  ranks: RankHost[],
  summaries: ReadonlyMap<string, readonly Omit<SchemeSummary, 'master'>[]>,
): NetworkReport {
  const hostOf = (r: number) => ranks[r]?.host ?? String(r);
  const probed = (preflight?.links ?? []).map((l) => ({ ...l, fromHost: hostOf(l.from), toHost: hostOf(l.to) }));
  // What a link can carry: the better of one stream and several (one stream alone can be held back by its
  // window or by a moment's stall of a busy receiver; several streams by sharing a queue).
  const capacity = probed.map((l) => ({ from: l.from, to: l.to, fromHost: l.fromHost, toHost: l.toHost, mbit: Math.max(l.mbit, l.mbitMulti) }));
  const slowProbed = slowOnes(capacity);
  const achieved = achievedRates(ranks, summaries);
  const slowAchieved = slowOnes(achieved);
  const { lateness, latest, matters, stepMs, clockMs, tooFew } = judgeLateness(ranks, summaries);
  const blame: string[] = [];
  // The pre-flight's median is the one its kind's line prints; the run's is of what the links achieved.
  const say = (what: string, slow: MeasuredLink[], all: MeasuredLink[], against: string) => {
    const host = commonHost(slow);
    blame.push(
      `${what}: ${slow.map((l) => `${linkName(l)} ${mbit(l.mbit)} Mbit/s`).join(', ')}, ${against} ${mbit(kindMbit(all))}${host ? `: every slow link touches host ${host}` : ''}`,
    );
  };
  // A host behind a slow link enters late because its data comes late: the link's doing, as far as the
  // link's slowness accounts for the lateness. What is left beyond that is the host's own compute.
  // (Against what matters, not the spread: the spread already judged the host late; this asks whether the
  // link leaves enough of it to be the host's own.) But a host short of CPU also reads its links in fits and
  // starts, so the link into it looks slow for the host's own reason. What no link slows says which it was:
  // its compute, and how long its event loop was held up; longer than the other hosts' by more than what
  // matters and than their own figures reach (lateness.ts's `own`), it is the host (a host behind a slow link
  // computes as fast and waits with its loop free).
  const linkDelay = latest ? delayInto(latest.host, achieved) : 0;
  // Where the ranks timed their event loops, the verdict "its compute" needs that evidence: a host late with its
  // compute and loop as the others' only waited (for a link, or by chance in a short run: a healthy 2 x 2 run
  // of 17 ms steps had one host 4.6 ms late in 4 of 7). Without the loop's figures (an older report), its
  // compute or the link's share.
  const lateHost = latest && (latest.own || (!latest.measured && latest.ms - linkDelay > matters)) ? latest : null;
  // A host short of CPU reads and sends in fits and starts, so the links touching it look slow too.
  const symptoms = lateHost ? slowAchieved.filter((l) => l.fromHost === lateHost.host || l.toHost === lateHost.host) : [];
  const slowLinks = slowAchieved.filter((l) => !symptoms.includes(l));
  if (slowProbed.length)
    say('pre-flight, slowest links (the better of 1 and several streams)', slowProbed, capacity, 'against the median of the links between hosts');
  if (slowLinks.length) say('during the run, link', slowLinks, achieved, 'where the links between hosts achieved a median');
  if (lateHost)
    blame.push(
      `host ${lateHost.host}'s ranks entered collectives ${lateHost.ms.toFixed(1)} ms late per step (median of ${lateHost.steps} steps, late in ${lateHost.lateSteps}; a step: ${stepMs.toFixed(1)} ms${stalledText(lateHost)}): its compute, not the network${symptoms.length ? ` (its ${symptoms.map(linkName).join(', ')} carried less in fits and starts, as a host short of CPU does)` : ''}`,
    );
  if (!blame.length && (achieved.length >= 3 || probed.length >= 3)) blame.push(tooFew ? `no link stands out; ${tooFew}` : 'no link or host stands out');
  else if (tooFew) blame.push(tooFew);
  return {
    preflight: preflight && preflight.mode !== 'off' ? { ...preflight, links: probed } : null,
    capacity,
    slowProbed,
    achieved,
    slowAchieved,
    lateness,
    lateClockMs: clockMs,
    blame,
  };
}

/** Each kind's line: its median and its slowest link, in the pre-flight's rates (the better of 1 and several
 *  streams, as the verdict reads them). */
function kindLines(capacity: MeasuredLink[], streams: number): string[] {
  return (['between', 'inside'] as const).flatMap((kind) => {
    const links = capacity.filter((l) => kindOf(l) === kind);
    if (!links.length) return [];
    const slowest = [...links].sort((a, b) => a.mbit - b.mbit)[0];
    const m = kindMedian(links.map((l) => l.mbit));
    const rates =
      links.length < JUDGED_AMONG
        ? `${links.map((l) => `${linkName(l)} ${mbit(l.mbit)}`).join(', ')} Mbit/s (fewer than ${JUDGED_AMONG}: none is singled out)`
        : `median ${mbit(m)} Mbit/s, slowest ${linkName(slowest)} ${mbit(slowest.mbit)} (${((100 * (m - slowest.mbit)) / Math.max(m, 1e-9)).toFixed(0)}% below the median)`;
    const judged = { between: '', inside: "; not judged: a copy between processes on one machine moves at the pace of the cores it gets, not a network's" }[
      kind
    ];
    return [`${KIND_NAME[kind]} (the better of 1 and ${streams} streams): ${rates}${judged}`];
  });
}

/** Achieved rates above what the pre-flight measured on the same link between hosts: a shaper's burst or the
 *  kernel's buffers let a backlog through faster than the link's rate. Marked, not trimmed. */
const ABOVE_LINK = 1.1;
function aboveLink(l: MeasuredLink, capacity: MeasuredLink[]): boolean {
  const probe = capacity.find((c) => c.from === l.from && c.to === l.to);
  return crosses(l) && probe !== undefined && l.mbit > ABOVE_LINK * probe.mbit;
}

/** Below this share of plain TCP on a link between hosts, what a collective moves there is zerowire's pace. */
const INSTRUMENT_SHARE = 0.8;

const gbit = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(1)} Gbit/s` : `${mbit(x)} Mbit/s`);
/** '46%', '46-61%', '7.7-11.9 Gbit/s': the least and the most, the unit once. */
const range = (xs: number[], f: (x: number) => string) => {
  const [lo, hi] = [f(Math.min(...xs)), f(Math.max(...xs))];
  if (lo === hi) return lo;
  const unit = /[^\d.]+$/.exec(lo)?.[0] ?? '';
  return unit && hi.endsWith(unit) ? `${lo.slice(0, -unit.length)}-${hi}` : `${lo}-${hi}`;
};

/** Where zerowire's transport moved much less than plain TCP on the same links between hosts: the figures
 *  above that rate measure the instrument. With --link-scale K each link stands for K times what it carried,
 *  so the emulated rate is K times zerowire's pace, not the network's. */
export function instrumentNote(n: NetworkReport, linkScale = 1): string | null {
  const links = (n.preflight?.links ?? []).filter((l) => l.fromHost !== l.toHost && l.plainMbit !== undefined && l.plainMbitMulti !== undefined);
  const rated = links.map((l) => ({ ours: Math.max(l.mbit, l.mbitMulti), plain: Math.max(l.plainMbit!, l.plainMbitMulti!) }));
  const low = rated.filter((r) => r.ours < INSTRUMENT_SHARE * r.plain);
  if (!low.length) return null;
  const streams = n.preflight!.links[0]?.streams ?? 0;
  const shares = low.map((r) => Math.floor((100 * r.ours) / r.plain)); // floored: 79.9% is not 80%
  const scaled =
    linkScale > 1
      ? `; with --link-scale ${linkScale} each link stands for ${linkScale}x what it carried: the emulated rate is ${linkScale}x zerowire's pace (${range(
          low.map((r) => linkScale * r.ours),
          gbit,
        )}), not ${linkScale}x the network's (${range(
          low.map((r) => linkScale * r.plain),
          gbit,
        )})`
      : '';
  return `instrument: zerowire's transport moved ${range(shares, (x) => `${x}%`)} of what plain TCP moved on ${low.length} of ${rated.length} links between hosts (the better of 1 and ${streams} streams: ${range(
    low.map((r) => r.ours),
    gbit,
  )} against ${range(
    low.map((r) => r.plain),
    gbit,
  )}): collectives above ${gbit(Math.min(...low.map((r) => r.ours)))} measure zerowire (its framing, msgpack and the cores it gets), not the network; more streams or free cores would lift it${scaled}`;
}

/** A probed link's rates, with plain TCP's beside where it was measured. */
const probeRates = (l: LinkProbe) =>
  `${mbit(l.mbit)}/${mbit(l.mbitMulti)}${l.plainMbit !== undefined && l.plainMbitMulti !== undefined ? ` (plain TCP ${mbit(l.plainMbit)}/${mbit(l.plainMbitMulti)})` : ''}`;

/** The report's lines: the pre-flight's links, each kind's median and slowest, the achieved rates, the verdict. */
export function networkText(n: NetworkReport, linkScale = 1): string[] {
  const out: string[] = [];
  const p = n.preflight;
  if (p && !p.links.length) out.push(`pre-flight (${p.mode}): nothing to measure (${p.mode === 'all-pairs' ? 'one host' : 'one rank'})`);
  if (p && p.links.length) {
    const plain = p.links.some((l) => l.plainMbit !== undefined) ? ' (plain TCP beside it: the same link without WebSocket or msgpack)' : '';
    out.push(
      `pre-flight (${p.mode}, ${(p.ms / 1000).toFixed(2)} s), payload Mbit/s with 1 stream / ${p.links[0]?.streams ?? 0} streams${plain}, round trip: ${p.links
        .map((l) => `${linkName(l)} ${probeRates(l)}, ${l.rttMs.toFixed(2)} ms`)
        .join('; ')}`,
      ...kindLines(n.capacity, p.links[0]?.streams ?? 0),
    );
    const note = instrumentNote(n, linkScale);
    if (note) out.push(note);
  }
  if (n.achieved.length) {
    const above = n.achieved.filter((l) => aboveLink(l, n.capacity));
    out.push(
      `achieved during the run (payload while frames arrived), Mbit/s: ${n.achieved.map((l) => `${linkName(l)} ${mbit(l.mbit)}${above.includes(l) ? '*' : ''}`).join(', ')}`,
    );
    if (above.length)
      out.push(
        `* above what the pre-flight measured on that link: a shaper's burst (lan.sh's tbf) or the kernel's buffers let a backlog through at once; the link's own rate is the pre-flight's (docs/lan.md)`,
      );
  }
  if (n.lateness.length > 1)
    out.push(
      `late entering collectives (ms per step after the median rank beyond the clocks' ±${n.lateClockMs.toFixed(2)} ms, median over steps; steps late): ${n.lateness.map((h) => `${h.host} ${h.ms.toFixed(1)} (${h.lateSteps}/${h.steps})`).join(', ')}`,
    );
  out.push(...n.blame.map((b) => `verdict: ${b}`));
  return out;
}

/** The rates the ring's floor is read at: its slowest link, and the median of that link's kind (named). */
export function ringFloorRates(n: NetworkReport): { slowest: number; median: number; medianOf: string } | null {
  if (n.capacity.length < 2) return null;
  const slowest = [...n.capacity].sort((a, b) => a.mbit - b.mbit)[0];
  const kind = kindOf(slowest);
  return { slowest: slowest.mbit, median: kindMedian(n.capacity.filter((l) => kindOf(l) === kind).map((l) => l.mbit)), medianOf: KIND_NAME[kind] };
}
