// A shaped link's bucket in the fluid model: a burst leaves at the host's pace, the rest at the shaped rate,
// and an idle link fills its bucket again.
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../simulator/virtual-clock.js';
import { Fluid } from '../../../simulator/network/fluid.js';
import { TokenBuckets } from '../../../simulator/network/token-bucket.js';
import { sleep, withClock } from '../../../shared/time/clock.js';

describe('token bucket', () => {
  it('passes a burst at the peak, then the shaped rate, and refills while idle', async () => {
    const clock = new VirtualClock();
    // 12,000 B/ms (96 Mbit/s), a 256 KiB bucket, 1.2e6 B/ms while it holds tokens
    const buckets = new TokenBuckets((r) => (r === 'nic:0' ? { rate: 12_000, burst: 262_144, peak: 1.2e6 } : null));
    const fluid = new Fluid(() => 12_000, buckets);
    const flow = (bytes: number) => ({ bytes, capBytesPerMs: Infinity, demands: new Map([['nic:0', 1]]) });
    const took: number[] = [];
    const timed = async (bytes: number) => {
      const t = clock.now();
      await fluid.transfer(flow(bytes));
      took.push(clock.now() - t);
    };
    await withClock(clock, () =>
      clock.drive(
        (async () => {
          await timed(84_000); // from a full bucket: at the peak
          await timed(400_000); // the bucket's rest at the peak, then the shaped rate
          await sleep(100); // idle: the bucket fills again (262,144 B at 12,000 B/ms take 21.8 ms)
          await timed(84_000);
        })(),
        () => '',
      ),
    );
    expect(took[0]).toBeCloseTo(84_000 / 1.2e6, 9);
    // the first sent at the peak while the bucket refilled at the rate: it drained by (peak − rate) per ms
    const left = 262_144 - (1.2e6 - 12_000) * took[0];
    const atPeak = left / (1.2e6 - 12_000); // ms until the bucket is empty while sending at the peak
    expect(took[1]).toBeCloseTo(atPeak + (400_000 - atPeak * 1.2e6) / 12_000, 6);
    expect(took[2]).toBeCloseTo(84_000 / 1.2e6, 9);
  });
});
