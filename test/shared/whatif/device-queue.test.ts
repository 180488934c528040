// The modeled device's timelines: work follows work, or waits for its inputs; this thread's lateness alone
// does not delay it. qgZ's kernels run on a reduce stream of their own, beside the compute.
import { describe, expect, it } from 'vitest';
import { DeviceQueue, ModeledCompute } from '../../../shared/whatif/modeled-compute.js';
import { LlamaSpec } from '../../../shared/models/llama/spec.js';
import { gpuModel } from '../../../shared/models/registry.js';
import { runDevice } from '../../../shared/whatif/preset.js';
import { quantizeWork } from '../../../shared/whatif/model-passes.js';
import { VirtualClock } from '../../../simulator/virtual-clock.js';
import { now, withClock } from '../../../shared/time/clock.js';

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

  it("runs qgZ's (de)quantization on the reduce stream: the compute does not queue behind it, nor it behind the compute", async () => {
    const spec = new LlamaSpec({ layers: 2, dim: 256, heads: 8, kvHeads: 4, ff: 688, seq: 128, vocab: 1000 });
    const { cost } = runDevice({ compute: 'model:h100' });
    const kernel = cost.chainMs(quantizeWork(4e8, 4e8));
    const run = async (steps: (d: ModeledCompute, at: (name: string) => () => void) => Promise<unknown>) => {
      const [d, clock, ends] = [new ModeledCompute(gpuModel(spec), cost), new VirtualClock(), {} as Record<string, number>];
      const at = (name: string) => () => void (ends[name] = now());
      await withClock(clock, () => clock.drive((async () => (await d.start(new Float32Array(0), 2), await steps(d, at)))(), () => 'the device'));
      return { ends, modeledMs: d.takeModeledMs() };
    };
    const alone = await run((d, at) => d.forward(1, null as never).then(at('forward')));
    // the kernels queued first: on the compute's stream they would hold the forward back
    const both = await run((d, at) =>
      Promise.all([
        d.quantizeOnReduceStream(4e8, 4e8).then(at('first')),
        d.quantizeOnReduceStream(4e8, 4e8).then(at('second')),
        d.forward(1, null as never).then(at('forward')),
      ]),
    );
    expect(alone.ends.forward).toBeGreaterThan(0);
    expect(both.ends.forward).toBeCloseTo(alone.ends.forward, 9);
    expect(both.modeledMs).toBeCloseTo(alone.modeledMs, 9); // the compute's own time only
    expect(both.ends.first).toBeCloseTo(kernel, 9);
    expect(both.ends.second).toBeCloseTo(2 * kernel, 9); // the stream's kernels one after another
  });
});
