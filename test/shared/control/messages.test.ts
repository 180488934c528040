// The schemas at the boundaries: what they accept round-trips through msgpack unchanged, and what they
// refuse is refused with a ProtocolError that names the field.
import { describe, expect, it } from 'vitest';
import { decodeControl, encodeMessage, validateHello, type ControlMessage } from '../../../shared/control/messages.js';
import { ConfigError, validateRunConfig } from '../../../shared/control/run-config.js';
import { makeRunConfig, type RunOptions } from '../../../cli/run-config-options.js';
import { ProtocolError } from '../../../shared/control/schema.js';
import { SMALL_OPTIONS } from '../../helpers/config.js';

const options: RunOptions = {
  ...SMALL_OPTIONS,
  scheme: 'all',
  model: '8,16,4',
  steps: 3,
  batch: 8,
  seed: 1,
  samples: 64,
  timeout: 10,
  prefetch: 1,
  compute: 'auto',
};
const config = makeRunConfig(options);

describe('control messages', () => {
  it('a run config from options: defaults filled, and it survives the wire', () => {
    expect(config).toMatchObject({
      model: { arch: 'mlp', widths: [8, 16, 4] },
      schemes: ['dp', 'zero1', 'zero2', 'zero3', 'hsdp', 'zeropp'],
      compute: 'auto',
      chunkBytes: 65536,
      timeoutMs: 10000,
      beta1: 0.9,
    });
    const assign: ControlMessage = {
      type: 'assign',
      rank: 1,
      world: 2,
      runId: 'r',
      ringKey: new Uint8Array(32),
      prevHost: '127.0.0.1',
      prevPort: 9,
      hostRanks: 1,
      config,
    };
    const back = decodeControl(encodeMessage(assign));
    expect(back).toEqual({ ...assign, ringKey: Buffer.alloc(32) });
  });

  it('--prefetch is both --gather-ahead and --reduce-behind; each alone says what it does', () => {
    expect(makeRunConfig({ ...options, prefetch: 2 })).toMatchObject({ gatherAhead: 2, reduceBehind: 2 });
    expect(makeRunConfig({ ...options, prefetch: undefined, gatherAhead: 2 })).toMatchObject({ gatherAhead: 2, reduceBehind: 1 });
    expect(makeRunConfig({ ...options, prefetch: undefined, reduceBehind: 0 })).toMatchObject({ gatherAhead: 1, reduceBehind: 0 });
  });

  it('--overlap on (the default) is every scheme at its best; off is the baseline; auto is left for each rank to resolve', () => {
    const on = makeRunConfig({ ...options, prefetch: undefined, compute: 'auto' });
    expect(on).toMatchObject({ overlap: true, gatherAhead: 1, reduceBehind: 1, compute: 'auto', bucketBytes: 25 << 20 });
    const off = makeRunConfig({ ...options, prefetch: undefined, overlap: 'off', bucketMib: 0.5, compute: 'auto' });
    expect(off).toMatchObject({ overlap: false, gatherAhead: 0, reduceBehind: 0, bucketBytes: 1 << 19 });
    expect(() => makeRunConfig({ ...options, prefetch: 1, overlap: 'off' })).toThrow(/^--overlap off runs every collective without overlap: drop --prefetch$/);
    expect(() => makeRunConfig({ ...options, overlap: 'maybe' })).toThrow(/^--overlap: "maybe" must be on or off$/);
    expect(() => makeRunConfig({ ...options, bucketMib: 0 })).toThrow(/^--bucket-mib \(in bytes\): expected >=1024, got 0$/);
  });

  it.each([
    [{ lr: 0 }, /^--lr: expected >0, got 0$/],
    [{ prefetch: 3 }, /^--prefetch: expected <=2, got 3$/],
    [{ prefetch: undefined, gatherAhead: 3 }, /^--gather-ahead: expected <=2, got 3$/],
    [{ prefetch: undefined, reduceBehind: -1 }, /^--reduce-behind: expected >=0, got -1$/],
    [{ steps: 1.5 }, /^--steps: expected an integer, got 1.5$/],
    [{ compute: 'gpu' }, /^--compute: expected auto, inline, thread or model:PRESET, got "gpu"$/],
    [{ chunkKib: 0.01 }, /^--chunk-kib \(in bytes\): expected >=64, got 10$/],
  ])('options %j are refused naming the option', (bad, message) => {
    expect(() => makeRunConfig({ ...options, ...bad } as RunOptions)).toThrow(ConfigError);
    expect(() => makeRunConfig({ ...options, ...bad } as RunOptions)).toThrow(message);
  });

  it.each([
    [{ type: 'step', rank: 0, scheme: 'dp', metrics: { step: 0, loss: 'low' } }, /field "metrics.loss": expected .*got "low"/],
    [{ type: 'nope' }, /field "type": expected .*"join".*got "nope"/],
    [{ type: 'join', version: 1, peerPort: 0, hostname: 'h', pid: 1 }, /field "peerPort": expected >=1, got 0/],
    [{ type: 'run', scheme: 'zero4' }, /field "scheme"/],
    [
      { type: 'assign', rank: 0, world: 1, runId: 'r', ringKey: new Uint8Array(31), prevHost: 'h', prevPort: 1, hostRanks: 1, config },
      /field "ringKey": expected 32 bytes, got 31 bytes of binary/,
    ],
    [
      {
        type: 'assign',
        rank: 0,
        world: 1,
        runId: 'r',
        ringKey: new Uint8Array(32),
        prevHost: 'h',
        prevPort: 1,
        hostRanks: 1,
        config: { ...config, schemes: [] },
      },
      /field "config.schemes": expected at least one scheme/,
    ],
  ])('%j is refused naming the field', (msg, message) => {
    expect(() => decodeControl(encodeMessage(msg as ControlMessage))).toThrow(ProtocolError);
    expect(() => decodeControl(encodeMessage(msg as ControlMessage))).toThrow(message);
  });

  it('garbage bytes and non-objects are protocol errors, never raw decoder errors', () => {
    expect(() => decodeControl(new Uint8Array([0xc1]))).toThrow(ProtocolError);
    expect(() => decodeControl(encodeMessage(5 as never))).toThrow(ProtocolError);
    expect(() => validateRunConfig({ ...config, steps: 0 })).toThrow(/config: field "steps": expected >=1, got 0/);
  });

  it('a peer hello needs a 32-byte proof', () => {
    expect(validateHello({ type: 'hello', rank: 1, runId: 'x', proof: new Uint8Array(32) }).rank).toBe(1);
    expect(() => validateHello({ type: 'hello', rank: 1, runId: 'x', proof: 'abc' })).toThrow(/field "proof": expected binary data/);
  });
});
