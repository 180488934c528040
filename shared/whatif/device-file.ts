// A GPU described by its datasheet (--device PATH): a JSON object of the figures the cost model needs, read
// into a Device that takes the H200's fitted efficiencies. Each key checked, the file and the key named.
import { ConfigError } from '../control/run-config.js';
import type { Device } from '../control/device.js';

const KEYS = ['name', 'title', 'memory_gb', 'bf16_tflops', 'fp16_tflops', 'memory_gbps', 'pcie_gbps', 'link', 'link_gbps', 'source'];

/** The Device of a parsed --device file (`file` names it in errors). */
export function deviceFromDatasheet(json: unknown, file: string): Device {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError(`--device ${file}: expected a JSON object`);
  const o = json as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !KEYS.includes(k));
  if (unknown.length) throw new ConfigError(`--device ${file}: key "${unknown[0]}" is not read (keys: ${KEYS.join(', ')})`);
  const num = (key: string, required = true): number | undefined => {
    const x = o[key];
    if (x === undefined && !required) return undefined;
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0)
      throw new ConfigError(`--device ${file}: key "${key}": expected a positive number, got ${JSON.stringify(x) ?? 'nothing'}`);
    return x;
  };
  const str = (key: string): string | undefined => {
    const x = o[key];
    if (x !== undefined && typeof x !== 'string') throw new ConfigError(`--device ${file}: key "${key}": expected a string, got ${JSON.stringify(x)}`);
    return x;
  };
  const given = str('name');
  const name = (given ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
    .slice(0, 32);
  if (!name) throw new ConfigError(`--device ${file}: key "name": a name with letters or digits (it names the card in the report)`);
  const [bf16, fp16] = [num('bf16_tflops', false), num('fp16_tflops', false)];
  if (bf16 === undefined && fp16 === undefined)
    throw new ConfigError(`--device ${file}: give "bf16_tflops" (or "fp16_tflops" for a card without bf16): the dense peak`);
  const linkKind = str('link');
  if (linkKind !== undefined && !['nvlink', 'pcie', 'none'].includes(linkKind.toLowerCase()))
    throw new ConfigError(`--device ${file}: key "link": nvlink, pcie or none (between the GPUs of a host), got "${linkKind}"`);
  const kind = linkKind?.toLowerCase() === 'nvlink' ? 'NVLink' : 'PCIe';
  return {
    name,
    title: `${str('title') ?? given} (from its datasheet, ${file})`,
    peakTflops: (bf16 ?? fp16)!,
    precision: bf16 !== undefined ? 'bf16' : 'fp16',
    memoryGB: num('memory_gb')!,
    memoryTBps: num('memory_gbps')! / 1000,
    hostLinkGBps: num('pcie_gbps')!,
    link: linkKind?.toLowerCase() === 'none' ? null : { kind, GBps: num('link_gbps', linkKind !== undefined) ?? num('pcie_gbps')! },
    source: str('source') ?? `the datasheet figures of ${file}`,
  };
}
