// The modeled device's timeline: work follows work, or waits for its inputs; this thread's lateness alone
// does not delay it.
import { describe, expect, it } from 'vitest';
import { DeviceQueue } from '../../../shared/whatif/modeled-compute.js';

describe('DeviceQueue', () => {
  it('runs work back to back, whenever this thread comes back to queue it', () => {
    const q = new DeviceQueue();
    q.inputsReady(100);
    expect(q.run(10)).toBe(110);
    // this thread handled frames until 115 before queuing the next layer: the device had it queued at 110
    expect(q.run(10)).toBe(120);
  });

  it('waits for inputs that arrive after the work before them ended', () => {
    const q = new DeviceQueue();
    q.inputsReady(0);
    expect(q.run(10)).toBe(10);
    q.inputsReady(25); // a gather ended at 25
    expect(q.run(10)).toBe(35);
    q.inputsReady(30); // inputs that were there before the device was free change nothing
    expect(q.run(5)).toBe(40);
  });
});
