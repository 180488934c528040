// Building and checking a RunConfig from user options, with errors that name the option.
import { WIRE_DTYPES, type WireDtype } from '../tensor/dtype.js';
import { COMPUTE_MODES, MAX_CHUNK_BYTES, SCHEMES, UNITS, validateRunConfig, type RunConfig, type SchemeName, type UnitMode } from './messages.js';

export interface RunOptions {
  scheme: string; // dp|zero1|zero2|zero3|all, or a comma list
  model: string; // "64,256,256,10"
  steps: number;
  batch: number;
  lr: number;
  seed: number;
  samples: number;
  wireDtype: string;
  unit: string;
  chunkKib: number;
  timeout: number; // seconds
  prefetch: number;
  compute: string;
}

export const DEFAULT_MODEL = '512,1024,512,10'; // 1,055,242 parameters

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseSchemes(text: string): SchemeName[] {
  const parts = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (parts.length === 1 && parts[0] === 'all') return [...SCHEMES];
  const bad = parts.filter((p) => !(SCHEMES as readonly string[]).includes(p));
  if (!parts.length || bad.length) throw new ConfigError(`--scheme: "${text}" is not one of ${SCHEMES.join('|')}|all (or a comma list)`);
  return [...new Set(parts)] as SchemeName[];
}

export function parseWidths(text: string): number[] {
  const parts = String(text).split(',').map((s) => s.trim());
  const widths = parts.map(Number);
  if (widths.length < 2 || widths.some((w) => !Number.isInteger(w) || w < 1)) {
    throw new ConfigError(`--model: "${text}" must be at least two positive integer layer widths, e.g. 64,256,256,10`);
  }
  return widths;
}

function positiveInt(v: number, name: string): number {
  if (!Number.isInteger(v) || v < 1) throw new ConfigError(`--${name}: ${v} must be a positive integer`);
  return v;
}

export function makeRunConfig(o: RunOptions): RunConfig {
  if (!(WIRE_DTYPES as readonly string[]).includes(o.wireDtype)) throw new ConfigError(`--wire-dtype: "${o.wireDtype}" is not one of ${WIRE_DTYPES.join('|')}`);
  if (!(UNITS as readonly string[]).includes(o.unit)) throw new ConfigError(`--unit: "${o.unit}" is not one of ${UNITS.join('|')}`);
  if (!(Number.isFinite(o.lr) && o.lr > 0)) throw new ConfigError(`--lr: ${o.lr} must be a positive number`);
  if (!(Number.isFinite(o.timeout) && o.timeout > 0)) throw new ConfigError(`--timeout: ${o.timeout} must be a positive number of seconds`);
  const chunkBytes = Math.round(o.chunkKib * 1024);
  if (!(chunkBytes >= 64 && chunkBytes <= MAX_CHUNK_BYTES)) throw new ConfigError(`--chunk-kib: ${o.chunkKib} must lie between 0.0625 and ${MAX_CHUNK_BYTES / 1024}`);
  if (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 2 ** 32 - 1) throw new ConfigError(`--seed: ${o.seed} must be an integer in [0, 2^32)`);
  const config: RunConfig = {
    model: parseWidths(o.model),
    steps: positiveInt(o.steps, 'steps'),
    batch: positiveInt(o.batch, 'batch'),
    lr: o.lr,
    beta1: 0.9,
    beta2: 0.999,
    eps: 1e-8,
    seed: o.seed,
    samples: positiveInt(o.samples, 'samples'),
    wireDtype: o.wireDtype as WireDtype,
    unit: o.unit as UnitMode,
    chunkBytes,
    timeoutMs: Math.round(o.timeout * 1000),
    schemes: parseSchemes(o.scheme),
    prefetch: o.prefetch,
    // auto: overlap needs the compute off the event loop, so prefetching runs it on a thread; without
    // prefetch there is nothing to overlap and the thread would only add copies.
    compute: (o.compute === 'auto' ? (o.prefetch > 0 ? 'thread' : 'inline') : o.compute) as RunConfig['compute'],
  };
  if (o.compute !== 'auto' && !(COMPUTE_MODES as readonly string[]).includes(o.compute)) throw new ConfigError(`--compute: "${o.compute}" is not one of auto|${COMPUTE_MODES.join('|')}`);
  if (![0, 1, 2].includes(o.prefetch)) throw new ConfigError(`--prefetch: ${o.prefetch} must be 0, 1 or 2`);
  return validateRunConfig(config);
}

/** Checks that need the world size. */
export function checkWorld(config: RunConfig, world: number): void {
  if (!Number.isInteger(world) || world < 1) throw new ConfigError(`--world: ${world} must be a positive integer`);
  if (config.batch % world !== 0) throw new ConfigError(`--batch ${config.batch} does not divide evenly over --world ${world} ranks (each rank takes batch/world rows)`);
}
