// Which model a command trains or plans: --model (widths, ARCH:FIELDS, a named shape) or --hf-config (a
// Hugging Face config.json, or the folder holding one), --seq for a decoder's sequence, and a Llama's own
// options. One resolution for local, coordinator and plan; the mapping of a config.json printed as a table.
import type { Argv } from 'yargs';
import { ConfigError, DEFAULT_MODEL, type RunConfig } from '../shared/control/run-config.js';
import { fileOrIn, readJson } from '../shared/io/json-file.js';
import { readHfConfig, type HfReading } from '../shared/models/hf-config.js';
import { modelUsage, parseModel, tuneModel } from '../shared/models/registry.js';

/** --model and its kin; `required`: a command that takes no model without one (plan: or --params). */
export function modelOptions<T>(y: Argv<T>, required = false) {
  return y
    .option('model', { type: 'string', describe: `an MLP's ${modelUsage()}${required ? '' : ` (default ${DEFAULT_MODEL})`}` })
    .option('hf-config', {
      type: 'string',
      describe:
        "a Hugging Face model's config.json (or its folder) instead of --model: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM, GPT2LMHeadModel",
    })
    .option('seq', { type: 'number', describe: "a decoder's training sequence (default: --model's, or the config's context up to 4096)" })
    .option('rope-theta', { type: 'number', describe: "llama: the rotary embeddings' base (default 10000, or the named model's)" })
    .option('rms-eps', { type: 'number', describe: "llama: RMSNorm's epsilon (default 1e-6, or the named model's)" });
}

export interface ModelArgs {
  model?: string;
  hfConfig?: string;
  seq?: number;
  ropeTheta?: number;
  rmsEps?: number;
}

export interface ResolvedModel {
  model: RunConfig['model'];
  /** How the user named it: --model's text, or the config.json's path; and the option that did. */
  text: string;
  option: '--model' | '--hf-config';
  /** A config.json's keys and what they became. */
  reading?: HfReading;
}

export function resolveModel(o: ModelArgs): ResolvedModel {
  if (o.hfConfig !== undefined && o.model !== undefined) throw new ConfigError('--model and --hf-config: give one of them');
  if (o.hfConfig !== undefined) {
    const file = fileOrIn(o.hfConfig, 'config.json');
    const reading = readHfConfig(readJson(file, '--hf-config'), file, o.seq);
    return { model: tuneModel(reading.model, { ropeTheta: o.ropeTheta, rmsEps: o.rmsEps }), text: file, option: '--hf-config', reading };
  }
  const text = o.model ?? DEFAULT_MODEL;
  return { model: tuneModel(parseModel(text), { seq: o.seq, ropeTheta: o.ropeTheta, rmsEps: o.rmsEps }), text, option: '--model' };
}

/** A config.json's mapping as the run prints it: each key, its value, what it became; then the notes. */
export function readingText(r: ResolvedModel): string {
  if (!r.reading) return '';
  const rows = r.reading.rows;
  const [k, v] = [Math.max(...rows.map((x) => x.key.length)), Math.max(...rows.map((x) => x.value.length))];
  const lines = rows.map((x) => `  ${x.key.padEnd(k)}  ${x.value.padEnd(v)}  ${x.became}`);
  return [`${r.text} read as ${r.model.arch} (key, value, what it became):`, ...lines, ...r.reading.notes.map((n) => `note: ${n}`)].join('\n');
}
