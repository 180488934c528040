// The what-if part of a report (--compute model:PRESET): the modeled device, and per scheme its modeled
// compute beside the measured step, throughput and MFU, bandwidth per collective as nccl-tests reports it,
// and whether the scheme's memory fits the device. Every figure that comes from the model says so.
import type { SchemeSummary } from '../control/messages.js';
import { modeledDevice, type SchemeName } from '../control/run-config.js';
import { bytesPerElement } from '../tensor/dtype.js';
import { runDevice } from '../whatif/preset.js';
import { activationBytes, modelFlops, tokensOf } from '../whatif/model-passes.js';
import type { RunPlan } from './run-plan.js';

export interface DeviceNote {
  name: string;
  title: string;
  peakTflops: number;
  memoryGB: number;
  source: string;
  precision?: 'bf16' | 'fp16';
  calibrated?: boolean; // measured on the card (the H200), or modeled from its datasheet
}

/** nccl-tests' definitions: algbw = S / t; busbw = algbw·2(N−1)/N (all-reduce) or ·(N−1)/N (the others). */
interface CollectiveBandwidth {
  kind: string;
  count: number; // per rank per step
  algbwGBps: number; // mean over the collectives, GB/s
  busbwGBps: number;
}

export interface WhatIfRow {
  modeledComputeMs: number; // per step, mean over ranks (modeled)
  tokensPerSecond: number; // the global batch over the measured step
  modeledMfu: number; // model FLOPs over modeled compute time at the dense peak (modeled)
  achievedMfu: number; // model FLOPs over the measured step at the dense peak
  theoryMemory: { statesBytes: number; activationsBytes: number; total: number; fits: boolean }; // per GPU, by theory (nothing is held)
  collectives: CollectiveBandwidth[];
}

export function deviceNote(plan: RunPlan): DeviceNote | null {
  if (!modeledDevice(plan.config)) return null;
  const d = runDevice(plan.config).device;
  return {
    name: d.name,
    title: d.title,
    peakTflops: d.peakTflops,
    memoryGB: d.memoryGB,
    source: d.source,
    precision: d.precision,
    calibrated: d.calibrated ?? false,
  };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function whatIfRow(plan: RunPlan, scheme: SchemeName, sums: SchemeSummary[], stepMs: number): WhatIfRow | null {
  const device = deviceNote(plan);
  if (!device) return null;
  const { config: c, world } = plan;
  const rows = c.batch / (world * c.accumulate); // per rank per micro-batch
  const timed = (xs: number[]) => (xs.length > 1 ? xs.slice(1) : xs);
  const modeledComputeMs = mean(sums.flatMap((s) => timed(s.modeledMs ?? [])));
  const flops = modelFlops(plan.gpu, rows) * c.accumulate; // one rank's, per optimizer step
  const peak = device.peakTflops * 1e12;
  const statesBytes = plan.memory(scheme).peak;
  const activationsBytes = activationBytes(plan.gpu, rows, c.recompute);
  return {
    modeledComputeMs,
    tokensPerSecond: stepMs > 0 ? (tokensOf(plan.gpu, c.batch) * 1000) / stepMs : 0,
    modeledMfu: modeledComputeMs > 0 ? flops / ((modeledComputeMs / 1000) * peak) : 0,
    achievedMfu: stepMs > 0 ? flops / ((stepMs / 1000) * peak) : 0,
    theoryMemory: { statesBytes, activationsBytes, total: statesBytes + activationsBytes, fits: statesBytes + activationsBytes <= device.memoryGB * 1e9 },
    collectives: bandwidths(plan, scheme, sums, bytesPerElement(c.wireDtype)),
  };
}

/** Collectives whose bandwidth means something (a barrier moves no data), and those whose bus bandwidth counts
 *  the ring twice (nccl-tests' busbw: all-reduce is a reduce-scatter and an all-gather). */
const MOVES_DATA = new Set(['reduce-scatter', 'all-gather', 'all-reduce', 'all-to-all']);
const BOTH_WAYS = new Set(['all-reduce']);

/** Per collective kind (and ring, for the hybrid's two), mean algbw and busbw over every rank's steps. */
function bandwidths(plan: RunPlan, scheme: SchemeName, sums: SchemeSummary[], bytes: number): CollectiveBandwidth[] {
  const G = plan.shardWorld(scheme);
  const ringWorld = (ring?: string) => (ring === 'group' ? G : ring === 'cross' ? plan.world / G : plan.world);
  const by = new Map<string, { N: number; all: boolean; alg: number[] }>();
  // steps that list their collectives (a simulation of a large world condenses most ranks' lists)
  const steps = sums.reduce((n, s) => n + s.steps.filter((st) => st.collectives.some((x) => MOVES_DATA.has(x.kind))).length, 0);
  for (const x of sums.flatMap((s) => s.steps.flatMap((st) => st.collectives))) {
    if (!MOVES_DATA.has(x.kind) || x.ms <= 0) continue;
    const key = x.ring ? `${x.kind} (${x.ring})` : x.kind;
    const k = by.get(key) ?? { N: ringWorld(x.ring), all: BOTH_WAYS.has(x.kind), alg: [] };
    k.alg.push((x.elements * bytes) / (x.ms / 1000) / 1e9);
    by.set(key, k);
  }
  return [...by].map(([kind, k]) => {
    const alg = mean(k.alg);
    return { kind, count: k.alg.length / Math.max(1, steps), algbwGBps: alg, busbwGBps: (alg * (k.all ? 2 : 1) * (k.N - 1)) / k.N };
  });
}
