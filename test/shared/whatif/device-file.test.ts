// A GPU by its datasheet (--device): read into the same Device a preset is, checked key by key.
import { describe, expect, it } from 'vitest';
import { deviceFromDatasheet } from '../../../shared/whatif/device-file.js';
import { deviceNamed } from '../../../shared/whatif/devices.js';

const A10 = { name: 'A10', memory_gb: 24, bf16_tflops: 125, memory_gbps: 600, pcie_gbps: 25, link: 'pcie', link_gbps: 32 };

describe('--device: a datasheet', () => {
  it("reads into the preset's figures (the cost model sees the same card)", () => {
    const d = deviceFromDatasheet(A10, 'a10.json');
    const preset = deviceNamed('a10');
    for (const k of ['name', 'peakTflops', 'precision', 'memoryGB', 'memoryTBps', 'hostLinkGBps', 'link'] as const) expect(d[k], k).toEqual(preset[k]);
    expect(d.calibrated).toBeUndefined();
    expect(d.title).toBe('A10 (from its datasheet, a10.json)');
  });

  it('a card without bf16 is fp16; no link between GPUs is null', () => {
    const d = deviceFromDatasheet({ ...A10, name: 'V-100', bf16_tflops: undefined, fp16_tflops: 125, link: 'none', link_gbps: undefined }, 'v.json');
    expect(d).toMatchObject({ name: 'v100', precision: 'fp16', peakTflops: 125, link: null });
  });

  it('refuses a bad file naming the key', () => {
    const bad = (o: Record<string, unknown>) => () => deviceFromDatasheet({ ...A10, ...o }, 'g.json');
    expect(bad({ memory_gb: '24' })).toThrow(/^--device g.json: key "memory_gb": expected a positive number, got "24"$/);
    expect(bad({ bf16_tflops: undefined })).toThrow(/^--device g.json: give "bf16_tflops"/);
    expect(bad({ link: 'infiniband' })).toThrow(/^--device g.json: key "link": nvlink, pcie or none/);
    expect(bad({ name: '---' })).toThrow(/^--device g.json: key "name"/);
    expect(bad({ tensor_cores: 288 })).toThrow(/^--device g.json: key "tensor_cores" is not read/);
    expect(() => deviceFromDatasheet([], 'g.json')).toThrow(/^--device g.json: expected a JSON object$/);
  });

  it("every preset says where its figures come from, and only the H200's model was fitted on the card", () => {
    for (const name of ['a10', 'a10040gb', 'a800', 'l4', 'h20', 'v100', 'rtx3090', 't4'])
      expect(deviceNamed(name).source, name).toMatch(/datasheet|whitepaper|brief/);
    expect(deviceNamed('v100').precision).toBe('fp16');
    expect(deviceNamed('h200').calibrated).toBe(true);
    expect(deviceNamed('a800').calibrated).toBeUndefined();
  });
});
