// --device PATH: a GPU by its datasheet (any card, not only a preset), modeled as the presets are.
import { ConfigError } from '../shared/control/run-config.js';
import type { Device } from '../shared/control/device.js';
import { readJson } from '../shared/io/json-file.js';
import { deviceFromDatasheet } from '../shared/whatif/device-file.js';

export const DEVICE_HELP =
  'a GPU by its datasheet, JSON: name, memory_gb, bf16_tflops (or fp16_tflops), memory_gbps, pcie_gbps, link (nvlink|pcie|none), link_gbps, source; compute modeled on it (docs/what-if.md)';

export function readDevice(path: string): Device {
  return deviceFromDatasheet(readJson(path, '--device'), path);
}

/** --compute with --device: the device's modeled compute, unless --compute says otherwise (refused). */
export function computeWith(compute: string | undefined, device: Device | undefined): string {
  if (!device) return compute ?? 'auto';
  if (compute !== undefined && compute !== 'auto')
    throw new ConfigError(`--device and --compute ${compute}: --device models compute on its card; give one of them`);
  return `model:${device.name}`;
}
