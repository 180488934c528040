// ZeRO++'s components as options of a ZeRO-3 run (training/schemes/zeropp.ts): one definition for every
// command that takes them, and their parsing, errors naming the option.
import type { Argv } from 'yargs';
import { ALL_SCHEMES, ConfigError, type RunConfig, type SchemeName } from '../shared/control/run-config.js';
import { QUANT_BLOCK_MULTIPLE } from '../shared/tensor/quantize.js';
import { DEFAULT_QUANT_BLOCK } from '../shared/control/zeropp.js';
import { componentSchemes, schemeRefusal, schemeTitle, takesComponents } from '../shared/training/schemes/table.js';

export function zeroPPOptions<T>(y: Argv<T>) {
  return y
    .option('qwz', {
      type: 'boolean',
      describe: "zero3: ZeRO++'s quantized weights: every parameter gather sent as int8 in blocks, with a scale per block",
    })
    .option('hpz', {
      type: 'boolean',
      describe:
        "zero3: ZeRO++'s hierarchical partition: the forward gather's weights also kept partitioned over the host's ranks, so the backward gather stays on the host (--shard-group ranks per host; by default the host's)",
    })
    .option('qgz', {
      type: 'boolean',
      describe:
        "zero3: ZeRO++'s quantized gradients: the gradients' reduce-scatter as two all-to-alls of int4 blocks, among the host's ranks and then among the ranks at the same place on each host (--shard-group as for --hpz)",
    })
    .option('quant-block', {
      type: 'number',
      describe: `with --qwz: values per quantization block, a multiple of ${QUANT_BLOCK_MULTIPLE} (default ${DEFAULT_QUANT_BLOCK})`,
    });
}

export interface ZeroPPOptions {
  qwz?: boolean;
  hpz?: boolean;
  qgz?: boolean;
  quantBlock?: number;
}

/** The components asked for, checked against the run's schemes, or undefined when none is. */
export function parseZeroPP(o: ZeroPPOptions, schemes: readonly SchemeName[], adapt: RunConfig['adapt']): RunConfig['zeropp'] {
  const on = [o.qwz && '--qwz', o.hpz && '--hpz', o.qgz && '--qgz'].filter(Boolean) as string[];
  const { asked, all } = componentSchemes(schemes);
  if (!on.length && !all.length) {
    if (o.quantBlock !== undefined) throw new ConfigError('--quant-block: only with --qwz, --qgz or --scheme zeropp (what it quantizes)');
    return undefined;
  }
  const block = o.quantBlock ?? DEFAULT_QUANT_BLOCK;
  if (!(Number.isInteger(block) && block > 0 && block % QUANT_BLOCK_MULTIPLE === 0))
    throw new ConfigError(
      `--quant-block: ${o.quantBlock} must be a positive multiple of ${QUANT_BLOCK_MULTIPLE} (the SIMD kernels quantize 16 values at a time)`,
    );
  const takers = ALL_SCHEMES.filter(takesComponents);
  if (on.length && !asked.length)
    throw new ConfigError(`${on.join(' and ')}: ZeRO++'s components change ${takers.map(schemeTitle).join(' or ')}: add ${takers.join(' or ')} to --scheme`);
  const zeropp = { qwz: !!o.qwz, hpz: !!o.hpz, qgz: !!o.qgz, block };
  const byName = !ALL_SCHEMES.every((s) => schemes.includes(s)); // `all` leaves a scheme that cannot run out instead (world-fit.ts)
  for (const s of [...asked, ...(byName ? all : [])]) {
    const why = schemeRefusal(s, { adapt, zeropp });
    if (why) throw new ConfigError(`${takesComponents(s) ? on.join(' and ') : `--scheme ${s}`} with --lora or --freeze: ${why}`);
  }
  return zeropp;
}
