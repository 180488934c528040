// Fine-tuning: LoRA adapters on chosen Linear layers (W x + (alpha/r)·B(A x), as PEFT's LoraLayer) and
// groups frozen by name. Every parameter group is laid out as [base tensors | its adapters], and what a group
// freezes is always a prefix of it: with LoRA the base (adapters trainable), with --freeze the whole group.
// So a group has one number for it, `frozen`, and everything downstream (the layout's frozen and trainable
// halves, the compute's skipped weight gradients, the theory) reads that number.
import type { NamedTensor } from './param-group.js';
import { Rng } from './rng.js';

interface LoraOptions {
  rank: number; // r
  alpha: number; // the scale is alpha / r
  targets?: string[]; // module names, PEFT's matching (the name, or its end after a dot); default: every Linear of the blocks
}

/** How a model is fine-tuned; absent: every parameter trains. */
export interface Adaptation {
  lora?: LoraOptions;
  freeze?: string[]; // group names: embeddings, head, blocks.I, blocks.I-J (an MLP: layers.I, layers.I-J)
}

/** One adapter of a group: where its base weight and its A and B lie inside the group, in elements. */
export interface Adapter {
  module: string; // the adapted Linear's name: h.0.attn.qkv, model.layers.0.self_attn.q_proj, layers.1
  weight: number; // W (outputs x inputs)
  a: number; // lora_A (rank x inputs)
  b: number; // lora_B (outputs x rank)
  inputs: number;
  outputs: number;
  rank: number;
  scale: number; // alpha / rank
}

/** A group as a model lays it out before adaptation: a name (for --freeze), its tensors and which are Linear. */
export interface BaseGroup {
  name: string;
  tensors: NamedTensor[]; // offsets in the unadapted flat vector
  linear: (t: NamedTensor) => boolean; // a Linear layer's weight (out, in): what LoRA can adapt
  defaultTarget: boolean; // adapted when --lora-targets is not given
}

/** What adaptation adds to a group. */
export interface AdaptedParts {
  offset: number; // in the adapted flat vector
  size: number; // base + adapters
  baseOffset: number; // where its base lay in the unadapted vector
  baseSize: number;
  frozen: number; // the frozen prefix: 0, baseSize or size
  adapters: Adapter[];
  tensors: NamedTensor[]; // base tensors, then lora_A and lora_B of each adapter (offsets in the adapted vector)
}

const count = (shape: number[]) => shape.reduce((a, b) => a * b, 1);
const moduleOf = (t: NamedTensor) => t.name.replace(/\.weight$/, '');
const matches = (module: string, target: string) => module === target || module.endsWith(`.${target}`);

/** Groups named by --freeze: NAME, NAME.I or NAME.I-J against the groups' names (blocks.3, layers.0). */
function frozenGroups(groups: BaseGroup[], patterns: string[]): Set<number> {
  const out = new Set<number>();
  for (const p of patterns) {
    const m = /^([a-z_]+)(?:\.(\d+)(?:-(\d+))?)?$/.exec(p.trim());
    const hit = groups
      .map((g, i) => ({ g, i }))
      .filter(({ g }) => {
        if (!m) return false;
        const [base, index] = g.name.split('.');
        if (base !== m[1]) return false;
        if (m[2] === undefined) return true;
        const k = Number(index);
        return k >= Number(m[2]) && k <= Number(m[3] ?? m[2]);
      });
    if (!hit.length) throw new AdaptationError('--freeze', `"${p}" names no group of this model (${describeNames(groups)})`);
    hit.forEach(({ i }) => out.add(i));
  }
  return out;
}

function describeNames(groups: BaseGroup[]): string {
  const bases = [...new Set(groups.map((g) => g.name.split('.')[0]))];
  return bases.map((b) => (groups.filter((g) => g.name.startsWith(`${b}.`)).length ? `${b}.I or ${b}.I-J` : b)).join(', ');
}

export class AdaptationError extends Error {
  override name = 'AdaptationError';
  constructor(
    readonly option: string,
    message: string,
  ) {
    super(`${option}: ${message}`);
  }
}

/** The groups with their adapters appended and their frozen prefixes, checked: a rank between 1 and each
 *  target's smaller side, every target name matching a Linear, something left to train. */
export function adaptGroups(groups: BaseGroup[], adapt: Adaptation | undefined): AdaptedParts[] {
  const lora = adapt?.lora;
  const frozen = frozenGroups(groups, adapt?.freeze ?? []);
  if (lora) {
    if (!(Number.isInteger(lora.rank) && lora.rank >= 1)) throw new AdaptationError('--lora', `rank ${lora.rank} must be a positive integer`);
    if (!(Number.isFinite(lora.alpha) && lora.alpha > 0)) throw new AdaptationError('--lora', `alpha ${lora.alpha} must be positive`);
    for (const target of lora.targets ?? [])
      if (!groups.some((g) => g.tensors.some((t) => g.linear(t) && matches(moduleOf(t), target))))
        throw new AdaptationError('--lora-targets', `"${target}" names no Linear layer of this model (${linearNames(groups)})`);
  }
  let offset = 0;
  const out = groups.map((g, i): AdaptedParts => {
    const baseOffset = g.tensors[0]?.offset ?? 0;
    const baseSize = g.tensors.reduce((t, x) => t + count(x.shape), 0);
    const shift = offset - baseOffset;
    const tensors = g.tensors.map((t) => ({ ...t, offset: t.offset + shift }));
    const adapters: Adapter[] = [];
    let at = baseSize;
    for (const t of lora ? g.tensors : []) {
      const module = moduleOf(t);
      const chosen = lora!.targets ? lora!.targets.some((x) => matches(module, x)) : g.defaultTarget;
      if (!g.linear(t) || !chosen) continue;
      const [outputs, inputs] = t.shape;
      if (lora!.rank > Math.min(inputs, outputs))
        throw new AdaptationError('--lora', `rank ${lora!.rank} is larger than ${module}'s smaller side (${outputs} x ${inputs})`);
      const r = lora!.rank;
      const ad = { module, weight: t.offset - baseOffset, a: at, b: at + r * inputs, inputs, outputs, rank: r, scale: lora!.alpha / r };
      adapters.push(ad);
      tensors.push({ name: `${module}.lora_A.weight`, offset: offset + ad.a, shape: [r, inputs] });
      tensors.push({ name: `${module}.lora_B.weight`, offset: offset + ad.b, shape: [outputs, r] });
      at += r * (inputs + outputs);
    }
    const parts = { offset, size: at, baseOffset, baseSize, adapters, tensors, frozen: frozen.has(i) ? at : lora ? baseSize : 0 };
    offset += at;
    return parts;
  });
  if (out.every((p) => p.frozen === p.size)) {
    const option = lora ? '--lora with --freeze' : '--freeze';
    throw new AdaptationError(option, `${(adapt?.freeze ?? []).join(',')} leaves nothing to train`);
  }
  return out;
}

function linearNames(groups: BaseGroup[]): string {
  const names = new Set<string>();
  for (const g of groups) for (const t of g.tensors) if (g.linear(t)) names.add(moduleOf(t).replace(/^(h|model\.layers|layers)\.\d+\./, ''));
  return [...names].join(', ');
}

/** The adapted model's initial weights: the base as the unadapted model draws it (the same seed gives the same
 *  base with or without adapters), each lora_A Kaiming-uniform as PEFT (a = sqrt 5: U(-1/sqrt(in), 1/sqrt(in)))
 *  from a generator of its own, each lora_B zero, so the adapted model starts as the base. */
export function adaptedInit(parts: AdaptedParts[], params: number, base: Float32Array, seed: number): Float32Array {
  const theta = new Float32Array(params);
  const rng = new Rng((seed ^ 0x4c6f5241) >>> 0); // "LoRA"
  for (const p of parts) {
    theta.set(base.subarray(p.baseOffset, p.baseOffset + p.baseSize), p.offset);
    for (const ad of p.adapters) {
      const bound = 1 / Math.sqrt(ad.inputs);
      const a = theta.subarray(p.offset + ad.a, p.offset + ad.a + ad.rank * ad.inputs);
      for (let i = 0; i < a.length; i++) a[i] = (2 * rng.uniform() - 1) * bound;
    }
  }
  return theta;
}

/** The adapter of a group whose base weight starts at `weight` (an offset inside the group), if any. */
export function adapterAt(adapters: readonly Adapter[], weight: number): Adapter | undefined {
  return adapters.find((a) => a.weight === weight);
}
