// Accelerators a what-if run can model. Each figure is the vendor's public datasheet value: dense bf16 (fp16 on
// a card without bf16) with fp32 accumulate (no sparsity), memory size and bandwidth, the host link every byte of a socket
// collective is staged over. Only the H200 was measured (test/fixtures/gpu/h200.jsonl); the others take the
// H200's fitted efficiencies and per-kernel host costs and scale by these figures (docs/what-if.md).
export type { Device } from '../control/device.js';
import type { Device } from '../control/device.js';

export const DEVICES: Device[] = [
  {
    name: 'h200',
    title: 'NVIDIA H200 SXM',
    peakTflops: 989.4,
    memoryGB: 141,
    memoryTBps: 4.8,
    hostLinkGBps: 55, // measured: 1 GiB pinned copies, 55.5 / 55.3 GB/s (PCIe 5 x16)
    calibrated: true, // test/fixtures/gpu/h200.jsonl
    precision: 'bf16',
    link: { kind: 'NVLink', GBps: 450 },
    source: 'NVIDIA H200 Tensor Core GPU datasheet (2024): 989 TFLOPS dense BF16, 141 GB HBM3e, 4.8 TB/s',
  },
  {
    name: 'h100',
    title: 'NVIDIA H100 SXM 80GB',
    peakTflops: 989.4,
    memoryGB: 80,
    memoryTBps: 3.35,
    hostLinkGBps: 55, // PCIe 5 x16, as the H200 measured
    precision: 'bf16',
    link: { kind: 'NVLink', GBps: 450 },
    source: 'NVIDIA H100 Tensor Core GPU datasheet (2023): 989 TFLOPS dense BF16 (1979 with sparsity), 80 GB HBM3, 3.35 TB/s',
  },
  {
    name: 'a100',
    title: 'NVIDIA A100 SXM 80GB',
    peakTflops: 312,
    memoryGB: 80,
    memoryTBps: 2.039,
    hostLinkGBps: 25, // PCIe 4 x16: half the measured PCIe 5 rate
    precision: 'bf16',
    link: { kind: 'NVLink', GBps: 300 },
    source: 'NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS BF16 dense, 80 GB HBM2e, 2,039 GB/s',
  },
  {
    name: 'l40s',
    title: 'NVIDIA L40S',
    peakTflops: 362.05,
    memoryGB: 48,
    memoryTBps: 0.864,
    hostLinkGBps: 25,
    precision: 'bf16',
    link: { kind: 'PCIe', GBps: 32 },
    source: 'NVIDIA L40S datasheet (2023): 362.05 TFLOPS BF16 dense (733 with sparsity), 48 GB GDDR6, 864 GB/s',
  },
  {
    name: 'rtx4090',
    title: 'NVIDIA GeForce RTX 4090',
    peakTflops: 165.2,
    memoryGB: 24,
    memoryTBps: 1.008,
    hostLinkGBps: 25,
    precision: 'bf16',
    link: { kind: 'PCIe', GBps: 32 },
    source: 'NVIDIA Ada Lovelace architecture whitepaper v2.1, RTX 4090: 165.2 TFLOPS BF16 dense with FP32 accumulate, 24 GB GDDR6X, 1,008 GB/s',
  },
  {
    name: 'mi300x',
    title: 'AMD Instinct MI300X',
    peakTflops: 1307.4,
    memoryGB: 192,
    memoryTBps: 5.3,
    hostLinkGBps: 55, // PCIe 5 x16
    precision: 'bf16',
    link: { kind: 'NVLink', GBps: 448 }, // Infinity Fabric, 7 links of 64 GB/s: NVLink's role
    source: 'AMD Instinct MI300X data sheet (2023): 1307.4 TFLOPS BF16 dense, 192 GB HBM3, 5.3 TB/s',
  },
  // The cards of the public reports of slow multi-node runs: datasheet figures, dense (no sparsity).
  {
    name: 'a10',
    title: 'NVIDIA A10',
    peakTflops: 125,
    precision: 'bf16',
    memoryGB: 24,
    memoryTBps: 0.6,
    hostLinkGBps: 25, // PCIe 4 x16
    link: { kind: 'PCIe', GBps: 32 },
    source: 'NVIDIA A10 Tensor Core GPU datasheet (2021): 125 TFLOPS BF16 dense (250 with sparsity), 24 GB GDDR6, 600 GB/s, PCIe Gen4 64 GB/s',
  },
  {
    name: 'a10040gb',
    title: 'NVIDIA A100 SXM 40GB',
    peakTflops: 312,
    precision: 'bf16',
    memoryGB: 40,
    memoryTBps: 1.555,
    hostLinkGBps: 25,
    link: { kind: 'NVLink', GBps: 300 },
    source: 'NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS BF16 dense, 40 GB HBM2, 1,555 GB/s, NVLink 600 GB/s',
  },
  {
    name: 'a800',
    title: 'NVIDIA A800 SXM 80GB',
    peakTflops: 312,
    precision: 'bf16',
    memoryGB: 80,
    memoryTBps: 2.039,
    hostLinkGBps: 25,
    link: { kind: 'NVLink', GBps: 200 },
    source: 'NVIDIA A800 Tensor Core GPU datasheet (2022): 312 TFLOPS BF16 dense, 80 GB HBM2e, 2,039 GB/s, NVLink 400 GB/s',
  },
  {
    name: 'l4',
    title: 'NVIDIA L4',
    peakTflops: 121,
    precision: 'bf16',
    memoryGB: 24,
    memoryTBps: 0.3,
    hostLinkGBps: 25,
    link: { kind: 'PCIe', GBps: 32 },
    source: 'NVIDIA L4 Tensor Core GPU datasheet (2023): 242 TFLOPS BF16 with sparsity (121 dense), 24 GB GDDR6, 300 GB/s, PCIe Gen4 x16',
  },
  {
    name: 'h20',
    title: 'NVIDIA H20',
    peakTflops: 148,
    precision: 'bf16',
    memoryGB: 96,
    memoryTBps: 4.0,
    hostLinkGBps: 55,
    link: { kind: 'NVLink', GBps: 450 },
    source: 'NVIDIA H20 product brief (2024): 148 TFLOPS BF16 dense, 96 GB HBM3, 4.0 TB/s, NVLink 900 GB/s, PCIe Gen5 x16',
  },
  {
    name: 'v100',
    title: 'NVIDIA V100 SXM2 32GB (fp16: no bf16)',
    peakTflops: 125,
    precision: 'fp16',
    memoryGB: 32,
    memoryTBps: 0.9,
    hostLinkGBps: 12, // PCIe 3 x16
    link: { kind: 'NVLink', GBps: 150 },
    source: 'NVIDIA V100 Tensor Core GPU datasheet (2020): 125 TFLOPS tensor (FP16), no BF16, 32 GB HBM2, 900 GB/s, NVLink 300 GB/s, PCIe Gen3 32 GB/s',
  },
  {
    name: 'rtx3090',
    title: 'NVIDIA GeForce RTX 3090',
    peakTflops: 71,
    precision: 'bf16',
    memoryGB: 24,
    memoryTBps: 0.936,
    hostLinkGBps: 25,
    link: { kind: 'PCIe', GBps: 32 },
    source: 'NVIDIA Ampere GA102 GPU architecture whitepaper v2.0, RTX 3090: 71 TFLOPS FP16/BF16 tensor with FP32 accumulate dense, 24 GB GDDR6X, 936 GB/s',
  },
  {
    name: 't4',
    title: 'NVIDIA T4 (fp16: no bf16)',
    peakTflops: 65,
    precision: 'fp16',
    memoryGB: 16,
    memoryTBps: 0.32,
    hostLinkGBps: 12,
    link: { kind: 'PCIe', GBps: 16 },
    source: 'NVIDIA T4 Tensor Core GPU datasheet (2019): 65 TFLOPS mixed precision (FP16/FP32), no BF16, 16 GB GDDR6, 320 GB/s, PCIe Gen3 x16',
  },
];

/** The preset called `name`, or an error that lists the known ones. */
export function deviceNamed(name: string): Device {
  const d = DEVICES.find((x) => x.name === name.toLowerCase());
  if (!d) throw new RangeError(`--compute model:${name}: no such device preset; known: ${DEVICES.map((x) => x.name).join(', ')}`);
  return d;
}
