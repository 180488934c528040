// The DDP peer on the LAN (bench:lan's `ddp` experiment): zerowire's DP against torch DDP (gloo, fp32
// gradients, OpenBLAS pinned to one thread per rank like ours) on the same namespaces, links, model, batch and
// steps, in alternating rounds; and both against two estimates, each with its assumptions printed: the serial
// step (the ring's bytes at the pre-flight's measured link rate, then one rank's forward + backward + Adam
// alone, a 1-rank run of the same rows, one after the other) and the overlap floor (floorMs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';
import { median } from '../shared/tensor/stats.js';
import { lanExec, lanJob } from './lan-run.js';
import { describePeer, torchPeer } from './torch-peer.js';

const CLI = fileURLToPath(new URL('../cli/zerowire.js', import.meta.url));
const DDP = fileURLToPath(new URL('../../bench/torch_ddp.py', import.meta.url));

export interface DdpOptions {
  rate: string;
  model: string; // MLP widths
  batch: number; // global
  steps: number;
  rounds: number;
  hosts: number;
  extra: string[]; // more zerowire options (--compute, ...)
}

/** Per step but the first, the slowest rank's step time of the report's one scheme. */
function slowestSteps(report: Report): number[] {
  const ranks = Object.values(report.perRank)[0];
  return ranks[0].steps.slice(1).map((_, i) => Math.max(...ranks.map((rk) => rk.steps[i + 1].stepMs)));
}

/** One rank alone on the rows a rank of the LAN job computes: its median step (forward + backward + Adam), and
 *  each unit's passes (and the optimizer), median ms. */
interface Alone {
  stepMs: number;
  passes: { pass: string; unit: number; ms: number }[];
}

function computeAlone(o: DdpOptions): Alone {
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-alone-'));
  try {
    const out = join(dir, 'alone.json');
    const rows = String(o.batch / o.hosts);
    const args = [
      'local',
      '--world',
      '1',
      '--scheme',
      'dp',
      '--model',
      o.model,
      '--batch',
      rows,
      '--steps',
      String(o.steps),
      '--out',
      out,
      '--log-level',
      'warn',
    ];
    const r = spawnSync(process.execPath, [CLI, ...args, ...o.extra], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`zerowire local --world 1 failed: ${r.stderr.slice(-400)}`);
    const report = JSON.parse(readFileSync(out, 'utf8')) as Report;
    const steps = Object.values(report.perRank)[0][0].steps.slice(1);
    const kinds = [...new Map(steps[0].units.map((u) => [`${u.pass} ${u.unit}`, u])).values()]; // once each, whatever --accumulate
    const passes = kinds.map(({ pass, unit }) => {
      const spans = steps.flatMap((st) => st.units.filter((u) => u.pass === pass && u.unit === unit));
      return { pass, unit, ms: median(spans.map((u) => u.end - u.start)) };
    });
    return { stepMs: median(slowestSteps(report)), passes };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * An estimate of the least a synchronous DP step can take on this machine, with no overhead and no skew: the
 * wire, plus the compute that must come before the first bucket's bytes (every forward pass, and the backward
 * passes down to the first bucket's last unit) on every rank, the ranks sharing the machine's cores, plus the
 * Adam that must follow the last bucket's bytes (its share of the parameters). Read from the LAN run's
 * buckets (its collectives' labels) and the 1-rank run's passes.
 */
function floorMs(report: Report, wire: number, alone: Alone, ranks: number): number {
  const grads = Object.values(report.perRank)[0][0].steps[1].collectives.flatMap((c) => {
    const m = /^grad b(\d+) u(\d+)$/.exec(c.label);
    return m ? [{ bucket: Number(m[1]), unit: Number(m[2]), elements: c.elements }] : [];
  });
  const firstBucketFrom = Math.min(...grads.filter((g) => g.bucket === 0).map((g) => g.unit));
  const lastBucket = Math.max(...grads.map((g) => g.bucket));
  const before = alone.passes.filter((p) => p.pass === 'forward' || (p.pass === 'backward' && p.unit >= firstBucketFrom));
  const share = grads.filter((g) => g.bucket === lastBucket).reduce((t, g) => t + g.elements, 0) / grads.reduce((t, g) => t + g.elements, 0) || 0;
  const sharing = Math.max(1, ranks / availableParallelism());
  const adam = alone.passes.find((p) => p.pass === 'optimizer')?.ms ?? 0;
  return wire + sharing * before.reduce((t, p) => t + p.ms, 0) + share * adam;
}

/** ms the ring's payload takes per step at the slowest pre-flight rate between hosts. */
function wireMs(report: Report): number {
  const rates = report.network.capacity.filter((l) => l.fromHost !== l.toHost).map((l) => l.mbit);
  if (!rates.length) throw new Error('the LAN run had no pre-flight rates between hosts');
  return (report.rows[0].sentPerStep.payload * 8) / (Math.min(...rates) * 1e3);
}

const f1 = (x: number) => x.toFixed(1);
const f2 = (x: number) => x.toFixed(2);

export function ddpOnLan(o: DdpOptions): string {
  const peer = torchPeer(1);
  const zw = ['--scheme', 'dp', '--model', o.model, '--batch', String(o.batch), '--wire-dtype', 'fp32', ...o.extra];
  const alone = computeAlone(o);
  const rows: string[][] = [];
  const ratios: number[] = [];
  const toSerial: number[] = [];
  for (let round = 1; round <= o.rounds; round++) {
    const report = lanJob(o.rate, zw, o.steps, o.hosts);
    const dp = median(slowestSteps(report));
    const wire = wireMs(report);
    const serial = wire + alone.stepMs;
    const floor = floorMs(report, wire, alone, o.hosts);
    let ddp: number | null = null;
    if (peer && !peer.refused) {
      const out = lanExec(o.rate, ['/usr/bin/python3', DDP, String(o.hosts), o.model, String(o.batch), String(o.steps)], o.hosts, peer.env);
      ddp = median((JSON.parse(out.trim().split('\n').pop()!) as { step_ms: number[] }).step_ms.slice(1));
      ratios.push(dp / ddp);
    }
    toSerial.push(dp / serial);
    rows.push([
      String(round),
      f1(dp),
      ddp === null ? 'missing' : f1(ddp),
      ddp === null ? '-' : f2(dp / ddp),
      f1(wire),
      f1(alone.stepMs),
      f1(serial),
      f2(dp / serial),
      f1(floor),
      ddp === null ? '-' : f1(0.9 * ddp),
    ]);
  }
  const head = [
    ['round', 'zerowire DP', 'torch DDP', 'DP / DDP', 'wire at link rate', 'compute alone', 'serial (est.)', 'DP / serial', 'floor (est.)', '0.9 x DDP'],
  ];
  const title = `DP against torch DDP (gloo) on ${o.hosts} hosts at ${o.rate}: MLP ${o.model}, global batch ${o.batch}, fp32 wire, ${o.steps} steps; median ms per step (slowest rank, first step left out)`;
  const summary = `median DP / DDP ${ratios.length ? f2(median(ratios)) : 'n/a (no peer)'}, DP / serial ${f2(median(toSerial))}; ${describePeer(peer, 1)}`;
  const serialNote =
    'serial (est.) = the wire at the slowest pre-flight rate, then one rank computing alone: a step with nothing overlapped. It is no limit: overlap beats it, and the floor is lower';
  const floorNote = `floor (est.) = the wire + the compute before the first bucket's bytes on every rank + the Adam after the last bucket's, assuming no overhead, no skew and ${o.hosts} ranks sharing ${availableParallelism()} cores linearly (${Math.max(1, o.hosts / availableParallelism()).toFixed(1)}x one rank's compute; ranks waiting on the wire leave cores free, so it can read high)`;
  return `${title}\n${textTable(head, rows)}\n${summary}\n${serialNote}\n${floorNote}`;
}
