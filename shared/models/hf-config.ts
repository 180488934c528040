// A Hugging Face model's config.json read as one of our models: the Llama family (LlamaForCausalLM,
// MistralForCausalLM, Qwen2ForCausalLM with its q/k/v biases, Qwen3ForCausalLM with its per-head q/k norms
// and head width) as a Llama, Phi3ForCausalLM as a Phi-3 (the
// Llama's keys, its projections fused), GPT2LMHeadModel as a GPT, tied embeddings wherever
// tie_word_embeddings says so. Every key is accounted for: read into a field, or left
// aside with the reason (named, never silent), in rows a run prints.
import { ConfigError, type RunConfig } from '../control/run-config.js';

/** A key of the file, its value, and what it became (or why it was left aside). */
interface MappingRow {
  key: string;
  value: string;
  became: string;
}

export interface HfReading {
  model: RunConfig['model'];
  rows: MappingRow[];
  /** What the reader decided beyond the keys (a sequence capped, a default taken). */
  notes: string[];
}

/** The training sequence when none is given: the model's context, at most this (a longer one is asked for). */
const SEQ_CAP = 4096;

/** Keys that describe serving, tokens or precision on disk: nothing of a training step's cost or shape. */
const NO_BEARING = new Set([
  '_name_or_path',
  'auto_map',
  'architectures',
  'model_type',
  'torch_dtype',
  'transformers_version',
  'use_cache',
  'bos_token_id',
  'eos_token_id',
  'pad_token_id',
  'initializer_range',
  'pretraining_tp',
  'max_window_layers',
  'use_sliding_window',
  'attention_dropout',
  'resid_pdrop',
  'embd_pdrop',
  'attn_pdrop',
  'summary_activation',
  'summary_first_dropout',
  'summary_proj_to_labels',
  'summary_type',
  'summary_use_proj',
  'task_specific_params',
  'n_ctx',
  'scale_attn_weights',
  'reorder_and_upcast_attn',
  'scale_attn_by_inverse_layer_idx',
]);

const LLAMA_FAMILY: Record<string, { biases: boolean; qkNorm?: boolean }> = {
  LlamaForCausalLM: { biases: false },
  MistralForCausalLM: { biases: false },
  Qwen2ForCausalLM: { biases: true }, // Qwen2Attention: q, k and v with biases, o without
  Qwen3ForCausalLM: { biases: false, qkNorm: true }, // Qwen3Attention: q_norm and k_norm over each head, no biases
};
const PHI3 = 'Phi3ForCausalLM';
const GPT2 = 'GPT2LMHeadModel';
const ARCHITECTURES_READ = [...Object.keys(LLAMA_FAMILY), PHI3, GPT2];

/** Reads keys off one file, each once, with its type checked and the file and key named on failure. */
class Keys {
  readonly rows: MappingRow[] = [];
  private readonly used = new Set<string>();
  constructor(
    private readonly json: Record<string, unknown>,
    readonly file: string,
  ) {}

  has(key: string): boolean {
    return this.json[key] !== undefined && this.json[key] !== null;
  }

  /** A positive integer (or the default where the key is absent), recorded as becoming `field`. */
  int(key: string, field: string, fallback?: number): number {
    const v = this.take(key, fallback);
    if (!Number.isInteger(v) || (v as number) < 1) throw new ConfigError(`${this.file}: key "${key}": expected a positive integer, got ${JSON.stringify(v)}`);
    this.row(key, v, field);
    return v as number;
  }

  num(key: string, field: string, fallback: number): number {
    const v = this.take(key, fallback);
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
      throw new ConfigError(`${this.file}: key "${key}": expected a positive number, got ${JSON.stringify(v)}`);
    this.row(key, v, field);
    return v;
  }

  bool(key: string, field: string, fallback: boolean): boolean {
    const v = this.take(key, fallback);
    if (typeof v !== 'boolean') throw new ConfigError(`${this.file}: key "${key}": expected true or false, got ${JSON.stringify(v)}`);
    this.row(key, v, field);
    return v;
  }

  str(key: string, fallback?: string): string {
    const v = this.take(key, fallback);
    if (typeof v !== 'string') throw new ConfigError(`${this.file}: key "${key}": expected a string, got ${JSON.stringify(v)}`);
    return v;
  }

  /** A key read by hand (its row written by the caller). */
  mark(key: string): void {
    this.used.add(key);
  }

  /** A key looked at and left aside, with the reason. */
  aside(key: string, why: string): void {
    if (!this.has(key)) return;
    this.used.add(key);
    this.rows.push({ key, value: show(this.json[key]), became: `left aside: ${why}` });
  }

  /** The keys nobody read: those of no bearing on a step, and those not understood. */
  rest(): void {
    for (const key of Object.keys(this.json).sort()) {
      if (this.used.has(key)) continue;
      const why = NO_BEARING.has(key) ? 'no bearing on a training step' : 'not understood';
      this.rows.push({ key, value: show(this.json[key]), became: `left aside: ${why}` });
    }
  }

  private take(key: string, fallback: unknown): unknown {
    this.used.add(key);
    const v = this.json[key];
    if (v === undefined || v === null) {
      if (fallback === undefined) throw new ConfigError(`${this.file}: key "${key}" is missing`);
      return fallback;
    }
    return v;
  }

  private row(key: string, v: unknown, field: string): void {
    this.rows.push({ key, value: this.json[key] === undefined || this.json[key] === null ? `(absent: ${show(v)})` : show(v), became: field });
  }
}

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

/** The training sequence: `seq` as given, or the model's context capped at SEQ_CAP (said in a note). */
function trainingSeq(context: number, seq: number | undefined, notes: string[]): number {
  if (seq !== undefined) {
    if (!Number.isInteger(seq) || seq < 1) throw new ConfigError(`--seq: ${seq} must be a positive integer`);
    if (seq > context) notes.push(`--seq ${seq} is longer than the model's context of ${context}`);
    return seq;
  }
  if (context <= SEQ_CAP) return context;
  notes.push(`sequence ${SEQ_CAP}: the model's context of ${context} capped (--seq N to train at another length)`);
  return SEQ_CAP;
}

function llamaFamily(k: Keys, arch: string, seq: number | undefined, notes: string[]): RunConfig['model'] {
  const layers = k.int('num_hidden_layers', 'layers');
  const dim = k.int('hidden_size', 'dim');
  const heads = k.int('num_attention_heads', 'heads');
  const kvHeads = k.int('num_key_value_heads', 'kvHeads', heads);
  const ff = k.int('intermediate_size', 'ff');
  const vocab = k.int('vocab_size', 'vocab');
  const context = k.int('max_position_embeddings', 'the context (the sequence when --seq is not given)', 2048);
  const ropeTheta = k.num('rope_theta', 'ropeTheta', 10000);
  const rmsEps = k.num('rms_norm_eps', 'rmsEps', 1e-6);
  const tied = k.bool('tie_word_embeddings', 'tied (the head is the embeddings)', false);
  if (k.str('hidden_act', 'silu') !== 'silu') throw new ConfigError(`${k.file}: key "hidden_act": only silu (SwiGLU) is read, got ${k.str('hidden_act')}`);
  k.rows.push({ key: 'hidden_act', value: '"silu"', became: 'SwiGLU' });
  // head_dim: each head's width, which need not be hidden_size / num_attention_heads (Qwen3-0.6B: 128 of 1024 / 16)
  const headDim = k.has('head_dim') ? k.int('head_dim', "headDim (each attention head's width)") : dim / heads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0)
    throw new ConfigError(`${k.file}: key "head_dim": each head's width must be an even whole number for rotary embeddings, got ${headDim}`);
  for (const key of ['attention_bias', 'mlp_bias'])
    if (k.has(key) && k.bool(key, 'no biases', false)) throw new ConfigError(`${k.file}: key "${key}": true is not read (biases on every projection)`);
  const qkvBias = LLAMA_FAMILY[arch]?.biases ?? false;
  const qkNorm = LLAMA_FAMILY[arch]?.qkNorm ?? false;
  k.aside('rope_scaling', 'rotary frequencies for long contexts: the same cost per step (a CPU run uses plain rotary)');
  k.aside('sliding_window', 'attention over the whole sequence (the same within the window)');
  const flags = {
    ...(qkvBias ? { qkvBias } : {}),
    ...(tied ? { tied } : {}),
    ...(headDim !== dim / heads ? { headDim } : {}),
    ...(qkNorm ? { qkNorm } : {}),
  }; // as the entry writes them: only when on
  return { arch: 'llama', layers, dim, heads, kvHeads, ff, seq: trainingSeq(context, seq, notes), vocab, ropeTheta, rmsEps, ...flags };
}

/** Phi-3: the Llama's keys and block, its q/k/v and gate/up projections each one tensor (phi3/spec.ts). */
function phi3(k: Keys, seq: number | undefined, notes: string[]): RunConfig['model'] {
  if (k.has('partial_rotary_factor') && k.num('partial_rotary_factor', 'rotary on every channel', 1) !== 1)
    throw new ConfigError(`${k.file}: key "partial_rotary_factor": rotary on part of each head is not read (1 is)`);
  k.aside('original_max_position_embeddings', 'the context the rotary scaling starts from: the same cost per step');
  const { arch: _llama, tied, headDim, ...shape } = llamaFamily(k, PHI3, seq, notes) as Record<string, unknown>;
  if (tied) throw new ConfigError(`${k.file}: key "tie_word_embeddings": true is not read for ${PHI3} (its lm_head is its own)`);
  if (headDim !== undefined) throw new ConfigError(`${k.file}: key "head_dim": a width other than hidden_size / num_attention_heads is not read for ${PHI3}`);
  return { arch: 'phi3', ...shape };
}

function gpt2(k: Keys, seq: number | undefined, notes: string[]): RunConfig['model'] {
  const layers = k.int('n_layer', 'layers');
  const dim = k.int('n_embd', 'dim');
  const heads = k.int('n_head', 'heads');
  const vocab = k.int('vocab_size', 'vocab');
  const context = k.int('n_positions', 'the context (the sequence when --seq is not given)', 1024);
  const tied = k.bool('tie_word_embeddings', 'tied (the head is the embeddings)', true);
  if (k.has('n_inner') && k.int('n_inner', 'the MLP width') !== 4 * dim) throw new ConfigError(`${k.file}: key "n_inner": only 4 × n_embd is read`);
  k.aside('activation_function', 'GELU (a CPU run uses the exact erf form; the cost is the same)');
  k.aside('layer_norm_epsilon', "LayerNorm's epsilon (a CPU run uses 1e-5)");
  return { arch: 'gpt', layers, dim, heads, seq: trainingSeq(context, seq, notes), vocab, ...(tied ? { tied } : {}) };
}

/** A parsed config.json (`file` names it in errors) as one of our models, with every key accounted for. */
export function readHfConfig(json: unknown, file: string, seq?: number): HfReading {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError(`${file}: expected a JSON object (a model's config.json)`);
  const k = new Keys(json as Record<string, unknown>, file);
  const archs = (json as { architectures?: unknown }).architectures;
  if (!Array.isArray(archs) || typeof archs[0] !== 'string')
    throw new ConfigError(`${file}: key "architectures": expected a list naming the model class (${ARCHITECTURES_READ.join(', ')})`);
  const arch = archs[0];
  const notes: string[] = [];
  let model: RunConfig['model'];
  if (arch in LLAMA_FAMILY) model = llamaFamily(k, arch, seq, notes);
  else if (arch === PHI3) model = phi3(k, seq, notes);
  else if (arch === GPT2) model = gpt2(k, seq, notes);
  else throw new ConfigError(`${file}: architecture ${arch} is not read (zerowire reads ${ARCHITECTURES_READ.join(', ')})`);
  const biases = 'qkvBias' in model && model.qkvBias ? ', q/k/v with biases (qkvBias)' : '';
  const norms = 'qkNorm' in model && model.qkNorm ? ', q and k RMSNorm-ed per head (qkNorm)' : '';
  k.rows.unshift({ key: 'architectures', value: show(archs), became: `${model.arch}${biases}${norms}` });
  k.mark('architectures');
  k.rest();
  return { model, rows: k.rows, notes };
}
