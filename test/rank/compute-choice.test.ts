// Where a rank computes (--compute auto, resolved on the rank): a thread where there is something to overlap and
// a spare core, or where a unit would keep the event loop from its heartbeats; inline otherwise.
import { describe, expect, it } from 'vitest';
import { longestUnitSeconds, resolveCompute } from '../../rank/compute-choice.js';
import { makeRunConfig } from '../../cli/run-config-options.js';
import { modelSpec } from '../../shared/models/registry.js';
import { SMALL_OPTIONS } from '../helpers/config.js';

const options = { ...SMALL_OPTIONS, scheme: 'all', model: '8,16,4', batch: 8, samples: 64, prefetch: undefined, compute: 'auto' };

describe('--compute auto', () => {
  it('resolves by cores, overlap and the longest unit', () => {
    const on = makeRunConfig(options);
    const off = makeRunConfig({ ...options, overlap: 'off' });
    // A thread only where there is something to overlap and a spare core for it.
    expect(resolveCompute(on, 8, 4)).toBe('thread');
    expect(resolveCompute(on, 2, 4)).toBe('inline');
    expect(resolveCompute(off, 8, 1)).toBe('inline');
    expect(resolveCompute({ ...on, compute: 'thread' }, 1, 4)).toBe('thread');
    // A unit that would keep the event loop from its heartbeats past a quarter of the limit: a thread anyway.
    expect(resolveCompute(off, 2, 4, { unitSeconds: 0.4, heartbeatMs: 1200 })).toBe('thread');
    expect(resolveCompute(off, 2, 4, { unitSeconds: 0.2, heartbeatMs: 1200 })).toBe('inline');
    expect(resolveCompute({ ...off, compute: 'inline' }, 2, 4, { unitSeconds: 9, heartbeatMs: 1200 })).toBe('inline'); // asked for
    // What the estimate says of real shapes: the README's GPT and the default MLP stay inline, a 1024-wide GPT
    // on 4 sequences of 1024 tokens does not.
    const seconds = (model: string, rows: number) => longestUnitSeconds(modelSpec(makeRunConfig({ ...options, model })), rows);
    expect(seconds('gpt:4,128,4,64', 4)).toBeLessThan(0.3);
    expect(seconds('512,1024,512,10', 16)).toBeLessThan(0.3);
    expect(seconds('4096,4096,10', 16)).toBeLessThan(0.3);
    expect(seconds('gpt:8,1024,8,1024', 4)).toBeGreaterThan(5);
  });
});
