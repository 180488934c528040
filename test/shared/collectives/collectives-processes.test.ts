// Ranks as separate OS processes, each running the compiled worker (dist/, built by `npm test`'s pretest step).
import { afterAll, describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { RingProcesses } from '../../../bench/ring-processes.js';
import { compiled } from '../../helpers/cli.js';

let procs: RingProcesses | null = null;
afterAll(async () => {
  await procs?.stop();
});

describe('ring collectives across processes', () => {
  it('4 processes all-reduce 100003 fp32 elements exactly, with the expected payload bytes', async () => {
    procs = await RingProcesses.start(4, { CHUNK_BYTES: String(64 << 10) }, fileURLToPath(compiled('bench/ring-worker.ts')));
    const L = 100_003;
    const replies = await procs.all({ cmd: 'verify', length: L, dtype: 'fp32' }, 'verified');
    const padded = Math.ceil(L / 4) * 4;
    for (const r of replies) {
      expect(r.detail).toBe('exact');
      expect(r.payloadSent).toBe((2 * 3 * padded * 4) / 4);
      expect(r.frameSent).toBeGreaterThan(r.payloadSent);
    }
    const pids = procs.pids;
    expect(new Set(pids).size).toBe(4);
    expect(pids).not.toContain(process.pid);
  });
});
