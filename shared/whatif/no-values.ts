// A what-if rank's values (--compute model:...): its bands are extents, sizes without values, so converting,
// adding and stepping Adam do nothing here; the modeled device's time stands for that work.
import type { Values } from '../training/values.js';

export const NO_VALUES: Values = {
  toF32: (_src, dst) => dst,
  fromF32: () => undefined,
  addF32: () => undefined,
  adam: () => undefined,
  quantize: () => undefined,
  dequantizeEach: () => undefined, // no loops over views of nothing (values.ts says why)
  quantizeEach: () => undefined,
  dequantizeAddEach: () => undefined,
  toF32Strided: (_src, _first, _stride, _count, dst) => dst,
};
