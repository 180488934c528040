// Small run configs for tests, from the same options the CLI passes (so they go through the one schema).
import type { RunConfig } from '../../shared/control/run-config.js';
import { makeRunConfig, type RunOptions } from '../../cli/run-config-options.js';

export const SMALL_OPTIONS: RunOptions = {
  scheme: 'dp',
  model: '4,4',
  steps: 1,
  batch: 2,
  lr: 0.01,
  seed: 0,
  samples: 8,
  wireDtype: 'fp32',
  unit: 'layer',
  chunkKib: 64,
  timeout: 5,
  compute: 'inline',
  threads: '1',
};

export const smallConfig = (o: Partial<RunOptions> = {}): RunConfig => makeRunConfig({ ...SMALL_OPTIONS, ...o });
