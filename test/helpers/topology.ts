// A simulated network for tests: 2 hosts × 2 ranks unless told otherwise.
import type { Topology } from '../../simulator/network/topology.js';

export const topology = (o: Partial<Topology> = {}): Topology => ({
  hosts: 2,
  perHost: 2,
  transport: 'nccl',
  intra: { kind: 'nvlink', GBps: 450, latencyUs: 0.5 },
  nics: 1,
  nicGBps: 25,
  hopUs: 5,
  ampere: false,
  source: 'test',
  ...o,
});
