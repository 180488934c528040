// Accelerators a what-if run can model. Each figure is the vendor's public datasheet value: dense bf16 with
// fp32 accumulate (no sparsity), memory size and bandwidth, and the host link every byte of a socket
// collective is staged over. Only the H200 was measured (test/fixtures/gpu/h200.jsonl); the others take the
// H200's fitted efficiencies and per-kernel host costs and scale by these figures (docs/what-if.md).
export interface Device {
  name: string; // as given to --compute model:NAME
  title: string;
  peakTflops: number; // dense bf16, fp32 accumulate
  memoryGB: number; // 10^9 bytes
  memoryTBps: number; // HBM / GDDR bandwidth
  hostLinkGBps: number; // one direction, host <-> device (pinned copies)
  source: string;
}

export const DEVICES: Device[] = [
  {
    name: 'h200',
    title: 'NVIDIA H200 SXM',
    peakTflops: 989.4,
    memoryGB: 141,
    memoryTBps: 4.8,
    hostLinkGBps: 55, // measured: 1 GiB pinned copies, 55.5 / 55.3 GB/s (PCIe 5 x16)
    source: 'NVIDIA H200 Tensor Core GPU datasheet (2024): 989 TFLOPS dense BF16, 141 GB HBM3e, 4.8 TB/s',
  },
  {
    name: 'h100',
    title: 'NVIDIA H100 SXM 80GB',
    peakTflops: 989.4,
    memoryGB: 80,
    memoryTBps: 3.35,
    hostLinkGBps: 55, // PCIe 5 x16, as the H200 measured
    source: 'NVIDIA H100 Tensor Core GPU datasheet (2023): 989 TFLOPS dense BF16 (1979 with sparsity), 80 GB HBM3, 3.35 TB/s',
  },
  {
    name: 'a100',
    title: 'NVIDIA A100 SXM 80GB',
    peakTflops: 312,
    memoryGB: 80,
    memoryTBps: 2.039,
    hostLinkGBps: 25, // PCIe 4 x16: half the measured PCIe 5 rate
    source: 'NVIDIA A100 Tensor Core GPU datasheet (2021): 312 TFLOPS BF16 dense, 80 GB HBM2e, 2,039 GB/s',
  },
  {
    name: 'l40s',
    title: 'NVIDIA L40S',
    peakTflops: 362.05,
    memoryGB: 48,
    memoryTBps: 0.864,
    hostLinkGBps: 25,
    source: 'NVIDIA L40S datasheet (2023): 362.05 TFLOPS BF16 dense (733 with sparsity), 48 GB GDDR6, 864 GB/s',
  },
  {
    name: 'rtx4090',
    title: 'NVIDIA GeForce RTX 4090',
    peakTflops: 165.2,
    memoryGB: 24,
    memoryTBps: 1.008,
    hostLinkGBps: 25,
    source: 'NVIDIA Ada Lovelace architecture whitepaper v2.1, RTX 4090: 165.2 TFLOPS BF16 dense with FP32 accumulate, 24 GB GDDR6X, 1,008 GB/s',
  },
  {
    name: 'mi300x',
    title: 'AMD Instinct MI300X',
    peakTflops: 1307.4,
    memoryGB: 192,
    memoryTBps: 5.3,
    hostLinkGBps: 55, // PCIe 5 x16
    source: 'AMD Instinct MI300X data sheet (2023): 1307.4 TFLOPS BF16 dense, 192 GB HBM3, 5.3 TB/s',
  },
];

/** The preset called `name`, or an error that lists the known ones. */
export function deviceNamed(name: string): Device {
  const d = DEVICES.find((x) => x.name === name.toLowerCase());
  if (!d) throw new RangeError(`--compute model:${name}: no such device preset; known: ${DEVICES.map((x) => x.name).join(', ')}`);
  return d;
}
