// What a model's folder gives the registry: its configuration (a named type with its own schema), how
// `--model` writes it, and from a spec of it, the compute (inline or on a thread), the data, the GPU passes
// and its batch rows. models/registry.ts holds one entry per model; nothing else asks which model it has.
import type * as v from 'valibot';
import { ConfigError, type RunConfig } from '../control/run-config.js';
import type { ArenaModel } from '../training/arena-model.js';
import type { Adaptation } from '../training/adapters.js';
import type { TrainingData } from '../training/data.js';
import type { ModelSpec } from '../training/model-spec.js';
import type { GpuPasses } from '../whatif/model-passes.js';

/** A model's configuration as the run config carries it: its arch and its named fields. */
export interface ModelConfig {
  arch: string;
}

export interface ModelEntry<S extends ModelSpec, C extends ModelConfig> {
  /** Its named fields (without `arch`), checked as the run config arrives. */
  readonly schema: v.GenericSchema<unknown, Omit<C, 'arch'>>;
  /** `--model ARCH:FIELDS`, as the help and the errors show it; and those fields read (null: not this model's). */
  readonly usage: string;
  parse(text: string): C | null;
  /** The spec of a configuration, and the configuration of a spec (what a compute thread rebuilds it from). */
  spec(config: C, adapt?: Adaptation): S;
  config(spec: S): C;
  /** The model itself on its kernel arena: what a rank (inline or on a compute thread) runs. */
  arena(spec: S, threads: number, recompute: boolean): ArenaModel;
  /** What it trains on. */
  data(spec: S, c: Pick<RunConfig, 'samples' | 'seed'>): TrainingData;
  /** What one row of a batch holds, and what a row is called in the report. */
  row(spec: S): { inputs: number; labels: number; noun: string };
  /** Its work on a modeled GPU (whatif/model-passes.ts). */
  passes(spec: S): GpuPasses;
  /** Whether it can recompute activations in the backward pass (--recompute). */
  readonly recomputes: boolean;
  /** `plan`'s global batch when none is given. */
  defaultBatch(world: number): number;
  /** Why it trains only on a modeled device (--compute model:PRESET: no values), or null. */
  modeledOnly(config: C): string | null;
  /** A configuration from the positional numbers checkpoints held before configurations were named. */
  legacy(numbers: number[]): C;
  /** Its own options (--rope-theta, --rms-eps) onto a configuration; absent: the model has none. */
  tune?(config: C, o: ModelOptions): C;
}

/** Options of some models only, given on the command line. */
export interface ModelOptions {
  seq?: number; // a decoder's training sequence
  ropeTheta?: number;
  rmsEps?: number;
}

/** --rope-theta and --rms-eps refused for a model that has no rotary embeddings or RMSNorm. */
export function refuseLlamaOptions(o: ModelOptions): void {
  const given = [o.ropeTheta !== undefined && '--rope-theta', o.rmsEps !== undefined && '--rms-eps'].filter(Boolean);
  if (given.length) throw new ConfigError(`${given.join(' and ')}: only with a Llama model (llama:... or a Llama-family name)`);
}

/** --seq as a decoder's sequence, checked. */
export function sequence(o: ModelOptions, current: number): number {
  if (o.seq === undefined) return current;
  if (!Number.isInteger(o.seq) || o.seq < 1) throw new ConfigError(`--seq: ${o.seq} must be a positive integer`);
  return o.seq;
}

/** The fields of `--model ARCH:A,B,C[,D]` as positive integers, or null when the count is wrong or one is not. */
export function integerFields(fields: string, min: number, max: number): number[] | null {
  const n = fields.split(',').map((s) => Number(s.trim()));
  return n.length >= min && n.length <= max && n.every((x) => Number.isInteger(x) && x >= 1) ? n : null;
}
