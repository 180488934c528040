// ZeRO-3 with ZeRO++'s qwZ and hpZ (--qwz, --hpz; training/schemes/zeropp.ts) on 4 local ranks in 2 groups of 2
// (--shard-group: the "hosts"): bytes at the socket and memory as theory for each component alone and both;
// qwZ's forward gathers about half a 16-bit gather's bytes, hpZ's backward gathers on the host's ring; the
// loss as plain ZeRO-3's; the report's quantization error where it should be, of the size int8 blocks give.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../shared/accounting/report.js';
import { runCli } from '../helpers/cli.js';

describe('local --scheme zero3 --qwz --hpz', () => {
  it('each component alone and both: bytes and memory as theory, the loss as ZeRO-3', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-zpp-'));
    try {
      const base = ['local', '--world', '4', '--shard-group', '2', '--scheme', 'zero3', '--model', 'gpt:2,64,4,32', '--batch', '8', '--samples', '64'];
      const runs: Record<string, Report> = {};
      for (const [name, extra] of [
        ['plain', []],
        ['qwz', ['--qwz', '--quant-block', '256']],
        ['hpz', ['--hpz']],
        ['both', ['--qwz', '--hpz', '--quant-block', '256']],
        ['qgz', ['--qgz', '--quant-block', '256']],
        ['all', ['--qwz', '--hpz', '--qgz', '--quant-block', '256']],
      ] as const) {
        const out = join(dir, `${name}.json`);
        const r = await runCli([...base, ...extra, '--steps', '6', '--preflight', 'off', '--out', out], 90_000);
        expect(r.code, r.stderr).toBe(0);
        runs[name] = JSON.parse(readFileSync(out, 'utf8')) as Report;
        const x = runs[name].rows[0];
        expect(x.sentPerStep.payload, name).toBe(x.sentPerStep.theory);
        expect(x.resident.measured, name).toBe(x.resident.theory);
        expect(x.peak.measured, name).toBe(x.peak.theory);
        if (name === 'plain') expect(x.quantError, name).toBeNull();
        if (name === 'hpz') expect(x.quantError, name).toBeNull();
        if (name === 'qgz') expect(x.quantError?.weights, name).toBeNull();
      }
      const row = (n: string) => runs[n].rows[0];
      // hpZ keeps a secondary copy of 16-bit weights over G = 2 ranks: one more byte per parameter
      expect(row('hpz').resident.theory - row('plain').resident.theory).toBeCloseTo(1, 2);
      // qwZ: two gathers (forward, backward) of about half the bytes, and the gradients' reduce-scatter as before
      const plain = row('plain').sentPerStep.payload;
      expect(row('qwz').sentPerStep.payload / plain).toBeGreaterThan(0.6);
      expect(row('qwz').sentPerStep.payload / plain).toBeLessThan(0.7);
      for (const n of ['qwz', 'hpz', 'both', 'qgz', 'all']) {
        const x = row(n);
        console.log(
          `${x.title}: ${(x.sentPerStep.payload / 1024).toFixed(1)} KiB per rank per step (ZeRO-3 ${(plain / 1024).toFixed(1)}), final loss ${x.finalLoss.toFixed(4)} (ZeRO-3 ${row('plain').finalLoss.toFixed(4)})`,
        );
        expect(Math.abs(x.finalLoss - row('plain').finalLoss) / row('plain').finalLoss, n).toBeLessThan(0.005); // docs/zeropp.md: measured 0.03-0.09%
      }
      expect(row('hpz').finalLoss).toBe(row('plain').finalLoss); // hpZ moves the same 16-bit values another way
      for (const n of ['qwz', 'both']) {
        const q = row(n).quantError!.weights!;
        expect(q.maxRel.length).toBe(6);
        // int8 blocks: at most half a step of 1/127 of the block's largest magnitude
        for (const e of q.maxRel) {
          expect(e).toBeGreaterThan(1e-4);
          expect(e).toBeLessThanOrEqual(0.5 / 127 + 1e-6);
        }
      }
      // qgZ: int4 blocks, at most half a step of 1/7 of a block's largest magnitude, each exchange
      for (const n of ['qgz', 'all']) for (const e of row(n).quantError!.grads!.maxRel) expect(e).toBeLessThanOrEqual(0.5 / 7 + 1e-6);
      // all three: the bytes that leave a "host" (a group of 2) are qwZ's forward gathers and qgZ's int4 exchange
      expect(row('all').sentPerStep.payload / plain).toBeLessThan(0.6);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('zeropp trains as ZeRO-3 does: 80 steps of a small GPT end within 3% of its final loss', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-zpp-'));
    try {
      const out = join(dir, 'r.json');
      const args = ['local', '--world', '4', '--shard-group', '2', '--scheme', 'zero3,zeropp', '--model', 'gpt:2,64,4,32', '--batch', '16'];
      const r = await runCli([...args, '--steps', '80', '--lr', '2e-3', '--seed', '0', '--preflight', 'off', '--out', out], 120_000);
      expect(r.code, r.stderr).toBe(0);
      const [zero3, zeropp] = (JSON.parse(readFileSync(out, 'utf8')) as Report).rows;
      console.log(`seed 0, 80 steps: ZeRO-3 ${zero3.finalLoss.toFixed(4)}, ZeRO++ ${zeropp.finalLoss.toFixed(4)} (blocks of 8000)`);
      expect(zeropp.scheme).toBe('zeropp');
      expect(zero3.losses[79]).toBeLessThan(0.5 * zero3.losses[0]); // it learned
      expect(Math.abs(zeropp.finalLoss - zero3.finalLoss) / zero3.finalLoss).toBeLessThan(0.03);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it("under --recompute-regather a block is gathered again: on the run's ring without hpZ, from the host copy with it (as DeepSpeed, whose host copy serves every gather after the forward)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-zpp-'));
    try {
      const base = ['local', '--world', '4', '--shard-group', '2', '--scheme', 'zero3', '--model', 'gpt:2,64,4,32', '--batch', '8', '--samples', '32'];
      const rows: Record<string, Report['rows'][number]> = {};
      for (const [name, parts] of [
        ['all', ['--qwz', '--hpz', '--qgz']],
        ['no hpz', ['--qwz', '--qgz']],
      ] as const)
        for (const again of [false, true]) {
          const out = join(dir, `${name}-${again}.json`);
          const extra = [...parts, '--quant-block', '256', '--recompute', ...(again ? ['--recompute-regather'] : [])];
          const r = await runCli([...base, ...extra, '--steps', '3', '--preflight', 'off', '--out', out], 90_000);
          expect(r.code, r.stderr).toBe(0);
          const x = (JSON.parse(readFileSync(out, 'utf8')) as Report).rows[0];
          expect(x.sentPerStep.payload, `${name} ${again}`).toBe(x.sentPerStep.theory);
          if (name === 'all') expect(r.stdout.includes('backward gathers on the host)'), `${name} ${again}`).toBe(true);
          rows[`${name}${again ? ' again' : ''}`] = x;
        }
      const extra = (name: string) => rows[`${name} again`].sentPerStep.payload - rows[name].sentPerStep.payload;
      // without hpZ the gather again is one more int8 gather of each block on the run's ring; with hpZ, one more
      // 16-bit gather of each block's host copy on the host's ring of 2 (what crosses hosts: simulate.test.ts)
      expect(extra('no hpz')).toBeGreaterThan(0);
      expect(extra('all')).toBeGreaterThan(0);
      expect(extra('all')).not.toBe(extra('no hpz'));
      for (const name of ['all', 'no hpz']) expect(rows[`${name} again`].losses, name).toEqual(rows[name].losses);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  it('refuses what cannot work, naming the option', async () => {
    const cases: [string[], RegExp][] = [
      [['--scheme', 'dp', '--qwz'], /^zerowire: --qwz: ZeRO\+\+'s components change ZeRO-3: add zero3 to --scheme$/],
      [['--scheme', 'zero3', '--qwz', '--quant-block', '100'], /^zerowire: --quant-block: 100 must be a positive multiple of 16/],
      [['--scheme', 'zero3', '--hpz'], /^zerowire: --hpz: local runs every rank on this one host, .* give --shard-group 2/],
      [['--scheme', 'zero3', '--hpz', '--world', '3', '--batch', '48'], /^zerowire: --hpz: --world 3 cannot form 2 groups/],
      [['--scheme', 'zero3', '--quant-block', '64'], /^zerowire: --quant-block: only with --qwz/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['local', ...args], 20_000);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim(), args.join(' ')).toMatch(message);
    }
  }, 60_000);
});
