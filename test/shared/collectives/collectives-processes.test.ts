// Ranks as separate OS processes (compiled code from dist/, built by `npm test`'s pretest step).
import { afterAll, describe, expect, it } from 'vitest';
import { RingProcesses } from '../../../dist/bench/ring-processes.js';

let procs: RingProcesses | null = null;
afterAll(async () => {
  await procs?.stop();
});

describe('ring collectives across processes', () => {
  it('4 processes all-reduce 100003 fp32 elements exactly, with the expected payload bytes', async () => {
    procs = await RingProcesses.start(4, { CHUNK_BYTES: String(64 << 10) });
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
