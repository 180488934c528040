// `zerowire plan`: model states (and activations) per rank for each scheme, and whether they fit.
import { ConfigError, parseModel } from '../../shared/control/run-config.js';
import { modelSpec } from '../../shared/training/model.js';
import { parseBytes, parseCount } from '../../shared/accounting/units.js';
import { formatPlan, k8sResources, plan } from '../plan.js';
import { envWorld, type Cli } from '../options.js';

export function planCommand(y: Cli, _exit: (code: number) => void): Cli {
  return y.command(
    'plan',
    'model states per rank for each scheme, and whether they fit',
    (y) =>
      y
        .option('params', { type: 'string', describe: 'parameter count, e.g. 13e9 (or give --model)' })
        .option('model', { type: 'string', describe: 'a model instead: MLP widths, or gpt:LAYERS,DIM,HEADS,SEQ[,VOCAB] (adds the activations per rank)' })
        .option('batch', { type: 'number', default: 64, describe: 'with --model: the global batch (rows, or sequences of SEQ tokens)' })
        .option('accumulate', {
          type: 'number',
          default: 1,
          describe: 'micro-batches per optimizer step: adds the fp32 gradient accumulator, activations are one micro-batch',
        })
        .option('shard-group', { type: 'number', default: 0, describe: 'also the hybrid (hsdp): ZeRO-3 within groups of G ranks, replicas across them' })
        .option('recompute', { type: 'boolean', default: false, describe: 'with a GPT --model: activations with checkpointing per block' })
        .option('world', { type: 'number', default: Number(envWorld ?? 8) })
        .option('memory', { type: 'string', describe: 'memory per rank, e.g. 80GB' })
        .option('wire-dtype', { choices: ['bf16', 'fp32'] as const, default: 'bf16' as const })
        .option('k8s', { type: 'boolean', default: false, describe: "also print a rank container's Kubernetes resources block (deploy/k8s/ranks.yaml)" })
        .option('cpu', { type: 'number', default: 1, describe: 'with --k8s: CPU cores to request per rank' }),
    (a) => {
      if ((a.params === undefined) === (a.model === undefined)) throw new ConfigError('plan: give --params or --model (one of them)');
      if (!Number.isInteger(a.world) || a.world < 1) throw new RangeError(`--world: ${a.world} must be a positive integer`);
      if (!Number.isInteger(a.batch) || a.batch < 1) throw new RangeError(`--batch: ${a.batch} must be a positive integer`);
      const spec = a.model === undefined ? null : modelSpec(parseModel(a.model));
      const params = spec ? spec.params : parseCount(a.params!, '--params');
      if (!Number.isInteger(a.accumulate) || a.accumulate < 1) throw new RangeError(`--accumulate: ${a.accumulate} must be a positive integer`);
      const perRank = Math.ceil(a.batch / (a.world * a.accumulate)); // rows of one micro-batch
      const bytes = spec?.activationBytes(perRank, a.recompute) ?? 0;
      const activations = spec
        ? { bytes, model: `${spec.describe()}${a.recompute ? ', --recompute' : ''}`, batch: a.batch, accumulate: a.accumulate }
        : undefined;
      if (!(a.cpu > 0)) throw new RangeError(`--cpu: ${a.cpu} must be a positive number of cores`);
      const memory = a.memory === undefined ? undefined : parseBytes(a.memory);
      const G = a.shardGroup;
      if (G !== 0 && !(Number.isInteger(G) && G >= 2 && a.world % G === 0 && a.world / G >= 2))
        throw new RangeError(`--shard-group: ${G} must divide --world ${a.world} into at least 2 groups of at least 2 ranks`);
      const rows = plan(params, a.world, memory, a.wireDtype, a.accumulate, G);
      process.stdout.write(`${formatPlan(rows, params, a.world, memory, a.wireDtype, activations, a.accumulate)}\n`);
      if (a.k8s)
        process.stdout.write(
          `\n# for each rank container of deploy/k8s/ranks.yaml (every scheme, one after another):\n${k8sResources(rows, a.cpu, activations?.bytes ?? 0)}\n`,
        );
    },
  );
}
