// A modeled accelerator as the run config carries it (a preset's, or one read from its datasheet with
// --device): what the cost model needs of it, and where its figures come from.
import * as v from 'valibot';
import { finite, text } from './schema.js';

const positive = v.pipe(finite, v.gtValue(0));

export const DeviceSchema = v.object({
  name: v.pipe(v.string(), v.regex(/^[a-z0-9]{1,32}$/, 'lower-case letters and digits')), // --compute model:NAME
  title: text(200),
  peakTflops: positive, // dense, no sparsity, in `precision` with fp32 accumulate
  precision: v.picklist(['bf16', 'fp16']), // the card's training precision: fp16 where it has no bf16 (V100, T4)
  memoryGB: positive, // 10^9 bytes
  memoryTBps: positive, // HBM / GDDR bandwidth
  hostLinkGBps: positive, // one direction, host <-> device (pinned copies)
  link: v.nullable(v.object({ kind: v.picklist(['NVLink', 'PCIe']), GBps: positive })), // between GPUs of a host, one direction
  source: text(600),
  calibrated: v.optional(v.boolean()), // measured (the H200); otherwise its datasheet with the H200's fitted efficiencies
});

export type Device = v.InferOutput<typeof DeviceSchema>;
