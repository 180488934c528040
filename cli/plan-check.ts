// `plan --need ... --check`: each scheme's answer held against this machine's network. The what-if run (the
// modeled device, the real collectives) goes on deploy/lan/lan.sh's namespace LAN, its links shaped to
// --check-rate, at three rates around the answer: half, the answer, twice; a rate above the shaped one is
// reached with --link-scale (every collective carries 1/S of its bytes, so each link stands for one S times
// faster), a rate below it is shaped directly. Measured beside the curve's prediction at the same rate.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from '../shared/accounting/report.js';
import { textTable } from '../shared/accounting/table.js';
import { ConfigError } from '../shared/control/run-config.js';
import type { NeedArgs, SchemeNeed } from './plan-need.js';

const LAN = fileURLToPath(new URL('../../deploy/lan/lan.sh', import.meta.url));

export interface CheckArgs {
  rate: string; // the LAN's shaped rate, as tc takes it (1gbit)
  steps: number;
}

/** Gbit/s of a tc rate: 1gbit, 100mbit, 2.5gbit. */
function gbitOf(rate: string): number {
  const m = /^(\d+(?:\.\d+)?)([kmg]?)bit$/.exec(rate);
  if (!m) throw new RangeError(`--check-rate: ${rate} must look like 1gbit or 100mbit`);
  return Number(m[1]) * { k: 1e-6, m: 1e-3, g: 1, '': 1e-9 }[m[2] as 'k' | 'm' | 'g' | ''];
}

/** Refuses, before anything runs, what cannot check here. */
export function checkPossible(c: CheckArgs): void {
  gbitOf(c.rate);
  if (!(Number.isInteger(c.steps) && c.steps >= 2)) throw new RangeError(`--check-steps: ${c.steps} must be 2 or more (the first step warms up)`);
  if (process.getuid?.() !== 0) throw new ConfigError('plan --check: it runs the what-if on a LAN of network namespaces (deploy/lan/lan.sh): run it as root');
  if (!existsSync(LAN)) throw new ConfigError(`plan --check: ${LAN} is missing (run it from a checkout of zerowire)`);
}

/** The what-if options of a run with `a`'s model, device and schedule. */
function runOptions(a: NeedArgs, scheme: string): string[] {
  const model = a.hfConfig !== undefined ? ['--hf-config', a.hfConfig] : ['--model', a.model!];
  const o = ['--compute', a.compute, ...model, '--scheme', scheme, '--batch', String(a.batch), '--accumulate', String(a.accumulate)];
  if (a.seq !== undefined) o.push('--seq', String(a.seq));
  if (a.device !== undefined) o.splice(0, 2, '--device', a.device);
  o.push('--wire-dtype', a.wireDtype, '--overlap', a.overlap, '--bucket-mib', String(a.bucketMib), '--chunk-kib', String(a.chunkKib));
  if (a.recompute) o.push('--recompute');
  if (a.shardGroup) o.push('--shard-group', String(a.shardGroup));
  if (a.lora) o.push('--lora', a.lora);
  if (a.loraTargets) o.push('--lora-targets', a.loraTargets);
  if (a.freeze) o.push('--freeze', a.freeze);
  if (a.tflops !== undefined) o.push('--tflops', String(a.tflops));
  if (a.mfu !== undefined) o.push('--mfu', String(a.mfu));
  return o;
}

/** One what-if run on a fresh LAN: its mean step (the first left out), ms. */
function measure(a: NeedArgs, scheme: string, shaped: string, scale: number, steps: number, dir: string): number {
  const out = join(dir, `${scheme}-${shaped}-${scale}.json`);
  const hosts = a.shardGroup ? a.world / a.shardGroup : a.world;
  const lan = ['--hosts', String(hosts), '--procs', String(a.world / hosts), '--rate', shaped, '--'];
  const run = [...runOptions(a, scheme), '--link-scale', String(scale), '--steps', String(steps), '--out', out, '--log-level', 'warn'];
  const r = spawnSync('bash', [LAN, ...lan, ...run], { encoding: 'utf8', env: { ...process.env, NODE: process.execPath }, timeout: 20 * 60_000 });
  if (r.status !== 0)
    throw new Error(`plan --check: the what-if run of ${scheme} at ${shaped} x ${scale} failed: ${r.stderr.trim().split('\n').slice(-3).join(' / ')}`);
  return (JSON.parse(readFileSync(out, 'utf8')) as Report).rows[0].time.stepMs;
}

/** How a rate is reached on the LAN: shaped to it, or the shaped rate scaled up to it. */
function reach(gbit: number, base: number, baseRate: string): { shaped: string; scale: number; gbit: number } {
  if (gbit <= base) return { shaped: `${Math.max(1, Math.round(gbit * 1000))}mbit`, scale: 1, gbit: Math.max(1, Math.round(gbit * 1000)) / 1000 };
  const scale = Math.round(gbit / base);
  return { shaped: baseRate, scale, gbit: scale * base };
}

/** The check's table: for every scheme with an answer, three rates, predicted beside measured. */
export function checkNeeds(a: NeedArgs, needs: SchemeNeed[], c: CheckArgs): string {
  const base = gbitOf(c.rate);
  const dir = mkdtempSync(join(tmpdir(), 'zerowire-check-'));
  const rows: string[][] = [];
  try {
    for (const n of needs) {
      if (!n.need || !('gbit' in n.need)) continue;
      for (const target of [n.need.gbit / 2, n.need.gbit, 2 * n.need.gbit]) {
        const at = reach(target, base, c.rate);
        const predicted = n.predict(at.gbit).stepMs;
        const measured = measure(a, n.scheme, at.shaped, at.scale, c.steps, dir);
        process.stderr.write(`plan --check: ${n.title} at ${at.gbit} Gbit/s: predicted ${predicted.toFixed(1)} ms, measured ${measured.toFixed(1)}\n`);
        const err = (100 * (measured - predicted)) / predicted;
        rows.push([
          n.title,
          at.gbit.toPrecision(4),
          at.scale > 1 ? `${at.shaped} x ${at.scale}` : at.shaped,
          predicted.toFixed(1),
          measured.toFixed(1),
          `${err >= 0 ? '+' : ''}${err.toFixed(1)}%`,
        ]);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const head = [['scheme', 'Gbit/s', 'on the LAN', 'predicted step ms', 'measured', 'measured vs predicted']];
  return [
    `checked on this machine: what-if runs on lan.sh's namespace LAN (links shaped to ${c.rate}; above it --link-scale), ${c.steps} steps, the first left out`,
    textTable(head, rows),
  ].join('\n');
}
