// A simulated run's report (`zerowire simulate`): what the network was, which algorithm each collective got,
// and what the simulation itself took. The rest of the report is a run's report, every figure from the
// simulation: nothing was sent, no clock but the simulator's ran.
import { formatBytes } from './units.js';
import { textTable } from './table.js';

interface SimulatedChoice {
  kind: string;
  ranks: number;
  hosts: number;
  bytes: number; // the whole buffer, as NCCL counts it
  algorithm: string;
  channels: number;
  latencyUs: number;
  count: number; // collectives of this size and group, over every scheme and step
}

export interface SimulationNote {
  network: string; // the topology and transport in words
  choices: SimulatedChoice[];
  wallMs: number; // the simulation's own time
  events: number; // wake-ups the virtual clock handled
  heapMB: number; // the simulation's peak heap (its thread's)
  rssMB: number; // this process's peak resident memory
}

/** The simulated run's notes (the text report and the HTML page): what ran on what, the algorithms NCCL's
 *  model chose and how often, what the simulation took. */
export function simulatedNotes(s: SimulationNote): string[] {
  const by = new Map<string, number>();
  for (const c of s.choices) by.set(c.algorithm, (by.get(c.algorithm) ?? 0) + c.count);
  return [
    `SIMULATED (zerowire simulate; docs/simulate.md): every rank's own step schedule in virtual time on ${s.network}; no byte was sent and compute is the device model's`,
    `exposed: communication the step waited for, in the simulation's virtual time (compute = step − exposed); frame, socket and hidden are '-': a simulation moves payload over modeled links, with no frames or sockets to count and no arrivals to time`,
    `algorithms, by how many collectives took them: ${[...by].map(([a, n]) => `${a} ${n}`).join(', ')}`,
    `simulation: ${(s.wallMs / 1000).toFixed(1)} s, ${s.events} clock events, ${s.heapMB.toFixed(0)} MB heap and ${s.rssMB.toFixed(0)} MB resident at most`,
  ];
}

/** Each collective size with the algorithm it got, as a text table. */
export function simulatedTable(s: SimulationNote): string[] {
  const rows = s.choices.map((c) => [
    c.kind,
    `${c.ranks}`,
    `${c.hosts}`,
    formatBytes(c.bytes),
    c.algorithm,
    `${c.channels}`,
    c.latencyUs.toFixed(1),
    `${c.count}`,
  ]);
  return [
    'collectives by size, as the network model ran them:',
    textTable([['collective', 'ranks', 'hosts', 'size', 'algorithm', 'channels', 'latency µs', 'count']], rows),
  ];
}
