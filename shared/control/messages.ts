// Every message between coordinator and ranks (control plane) and the hello that opens a rank-to-rank
// connection: one TypeScript type each, one validator each, one encode/decode pair (msgpack).
import { pack, unpack } from 'msgpackr';
import { WIRE_DTYPES, type WireDtype } from '../tensor/dtype.js';
import { bytes, int, intArray, num, obj, oneOf, optStr, ProtocolError, str, type Obj } from './validate.js';

export const PROTOCOL_VERSION = 1;
/** Liveness: everyone pings every intervalMs; a peer silent for timeoutMs is lost. A SIGKILLed process
 *  closes its sockets at once; these catch frozen processes and cut links, within about 1.5 s. */
export const HEARTBEAT = { intervalMs: 300, timeoutMs: 1200 } as const;

/** Largest chunk payload a collective may send; peers refuse bigger WebSocket messages. */
export const MAX_CHUNK_BYTES = 64 << 20;

export const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3'] as const;
export type SchemeName = (typeof SCHEMES)[number];
export const UNITS = ['layer', 'model'] as const;
export const COMPUTE_MODES = ['inline', 'thread'] as const;
export type ComputeMode = (typeof COMPUTE_MODES)[number];
export type UnitMode = (typeof UNITS)[number];

/** Everything a rank needs to know to train; the coordinator broadcasts one of these. */
export interface RunConfig {
  model: number[]; // layer widths, e.g. [64, 256, 256, 10]
  steps: number;
  batch: number; // global batch, split evenly over ranks
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  seed: number;
  samples: number; // size of the synthetic data set
  wireDtype: WireDtype;
  unit: UnitMode;
  chunkBytes: number; // collective chunk size
  timeoutMs: number; // a collective that waits longer than this fails
  schemes: SchemeName[]; // run back to back on the same cluster, same initial weights and data
  prefetch: number; // ZeRO-3: unit gathers kept in flight ahead of compute (0, 1 or 2)
  compute: ComputeMode; // forward/backward on the rank's main thread, or on a worker thread
  checkpoint?: { every: number; dir: string }; // each rank writes its shards every `every` steps under dir/<scheme>/
  resume?: Partial<Record<SchemeName, { step: number; dir: string }>>; // continue a scheme from a complete checkpoint
}

function schemeList(v: unknown): SchemeName[] {
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => !(SCHEMES as readonly unknown[]).includes(x))) {
    throw new ProtocolError(`field "schemes": expected a non-empty list of ${SCHEMES.join('|')}`);
  }
  return v as SchemeName[];
}

function checkpointSpec(v: unknown): { every: number; dir: string } {
  const o = obj(v, 'checkpoint');
  return { every: int(o, 'every', 1), dir: str(o, 'dir') };
}

function resumeSpec(v: unknown): Partial<Record<SchemeName, { step: number; dir: string }>> {
  const o = obj(v, 'resume');
  const out: Partial<Record<SchemeName, { step: number; dir: string }>> = {};
  for (const k of Object.keys(o)) {
    if (!(SCHEMES as readonly string[]).includes(k)) throw new ProtocolError(`field "resume": unknown scheme ${JSON.stringify(k)}`);
    const e = obj(o[k], `resume.${k}`);
    out[k as SchemeName] = { step: int(e, 'step', 1), dir: str(e, 'dir') };
  }
  return out;
}

export function validateRunConfig(v: unknown): RunConfig {
  const o = obj(v, 'config');
  const model = intArray(o, 'model', 1);
  if (model.length < 2) throw new ProtocolError('field "model": needs at least two widths (input and output)');
  return {
    model,
    steps: int(o, 'steps', 0, 1e7),
    batch: int(o, 'batch', 1, 1e7),
    lr: num(o, 'lr'),
    beta1: num(o, 'beta1'),
    beta2: num(o, 'beta2'),
    eps: num(o, 'eps'),
    seed: int(o, 'seed', 0, 2 ** 32 - 1),
    samples: int(o, 'samples', 1, 1e8),
    wireDtype: oneOf(o, 'wireDtype', WIRE_DTYPES),
    unit: oneOf(o, 'unit', UNITS),
    chunkBytes: int(o, 'chunkBytes', 64, MAX_CHUNK_BYTES),
    timeoutMs: int(o, 'timeoutMs', 1, 1e9),
    schemes: schemeList(o.schemes),
    prefetch: int(o, 'prefetch', 0, 2),
    compute: oneOf(o, 'compute', COMPUTE_MODES),
    ...(o.checkpoint !== undefined ? { checkpoint: checkpointSpec(o.checkpoint) } : {}),
    ...(o.resume !== undefined ? { resume: resumeSpec(o.resume) } : {}),
  };
}

/** Bytes moved in one direction, all read from real objects. */
export interface Traffic {
  payload: number; // tensor data only
  envelope: number; // msgpack envelopes around that data
  frame: number; // everything the WebSocket carried (ws headers + envelope + payload + control frames), from the socket
}

export interface StepMetrics {
  step: number;
  loss: number;
  stepMs: number;
  computeMs: number; // the step minus exposed communication
  commMs: number; // wall time during which a collective was running
  exposedMs: number; // time the step stood waiting for communication
  sent: Traffic;
  recv: Traffic;
  collectives: CollectiveBrief[];
}

/** One collective inside a step, as reported. */
export interface CollectiveBrief {
  kind: string;
  label: string;
  elements: number;
  padded: number;
  payload: number; // bytes sent
  frame: number;
  ms: number;
}

export interface MemoryMetrics {
  resident: Record<string, number>; // live bytes per band between steps
  peak: number; // worst moment inside a step, model states + transients
  peakBands: Record<string, number>; // the bands at that moment
  peakComm: number; // highest live bytes of collective staging copies
  arrayBuffersBefore: number; // process.memoryUsage().arrayBuffers before the scheme allocated
  arrayBuffersPeak: number; // highest sample while it ran
}

export interface SchemeSummary {
  scheme: SchemeName;
  rank: number;
  params: number; // unpadded parameter count
  paddedParams: number; // as laid out for this world size
  steps: StepMetrics[];
  memory: MemoryMetrics;
  socket: { sent: number; recv: number }; // TCP socket bytes over the whole scheme, handshakes included
  iface?: { name: string; tx: number; rx: number }; // the kernel's interface counters over the scheme, when readable
  master: Uint8Array; // fp32 bytes of this rank's final master weights: its shard, or (DP) the padded model
}

export type ControlMessage =
  | { type: 'join'; version: number; peerPort: number; advertise?: string; hostname: string; pid: number; token?: string; model?: number[] }
  | { type: 'assign'; rank: number; world: number; runId: string; ringKey: Uint8Array; prevHost: string; prevPort: number; config: RunConfig }
  | { type: 'ready'; rank: number }
  | { type: 'run'; scheme: SchemeName }
  | { type: 'step'; rank: number; scheme: SchemeName; metrics: StepMetrics }
  | { type: 'done'; summary: SchemeSummary }
  | { type: 'checkpoint'; scheme: SchemeName; step: number; rank: number; file: string }
  | { type: 'finish' }
  | { type: 'abort'; reason: string };

/** Opens a rank-to-rank connection. `proof` = HMAC-SHA256(ringKey, runId|rank): only ranks the coordinator
 *  admitted to this run know the ring key, so nobody else can feed frames into the ring. */
export interface PeerHello {
  type: 'hello';
  rank: number;
  runId: string;
  proof: Uint8Array;
}

function traffic(v: unknown, what: string): Traffic {
  const o = obj(v, what);
  return { payload: num(o, 'payload'), envelope: num(o, 'envelope'), frame: num(o, 'frame') };
}

function numberRecord(v: unknown, what: string): Record<string, number> {
  const o = obj(v, what);
  for (const k of Object.keys(o)) num(o, k);
  return o as Record<string, number>;
}

function collectiveList(v: unknown): CollectiveBrief[] {
  if (!Array.isArray(v)) throw new ProtocolError('field "collectives": expected an array');
  return v.map((x) => {
    const o = obj(x, 'collective');
    return { kind: str(o, 'kind', 32), label: str(o, 'label', 128), elements: int(o, 'elements'), padded: int(o, 'padded'), payload: num(o, 'payload'), frame: num(o, 'frame'), ms: num(o, 'ms') };
  });
}

function stepMetrics(v: unknown): StepMetrics {
  const o = obj(v, 'metrics');
  return {
    step: int(o, 'step'),
    loss: num(o, 'loss'),
    stepMs: num(o, 'stepMs'),
    computeMs: num(o, 'computeMs'),
    commMs: num(o, 'commMs'),
    exposedMs: num(o, 'exposedMs'),
    sent: traffic(o.sent, 'sent'),
    recv: traffic(o.recv, 'recv'),
    collectives: collectiveList(o.collectives),
  };
}

function summary(v: unknown): SchemeSummary {
  const o = obj(v, 'summary');
  if (!Array.isArray(o.steps)) throw new ProtocolError('field "steps": expected an array');
  const mem = obj(o.memory, 'memory');
  const sock = obj(o.socket, 'socket');
  const s: SchemeSummary = {
    scheme: oneOf(o, 'scheme', SCHEMES),
    rank: int(o, 'rank'),
    params: int(o, 'params'),
    paddedParams: int(o, 'paddedParams'),
    steps: o.steps.map(stepMetrics),
    memory: {
      resident: numberRecord(mem.resident, 'resident'),
      peak: num(mem, 'peak'),
      peakBands: numberRecord(mem.peakBands, 'peakBands'),
      peakComm: num(mem, 'peakComm'),
      arrayBuffersBefore: num(mem, 'arrayBuffersBefore'),
      arrayBuffersPeak: num(mem, 'arrayBuffersPeak'),
    },
    socket: { sent: num(sock, 'sent'), recv: num(sock, 'recv') },
    master: bytes(o, 'master'),
  };
  if (s.master.byteLength % 4 !== 0) throw new ProtocolError('field "master": expected fp32 bytes');
  if (o.iface !== undefined) {
    const f = obj(o.iface, 'iface');
    s.iface = { name: str(f, 'name'), tx: num(f, 'tx'), rx: num(f, 'rx') };
  }
  return s;
}

export function validateControl(v: unknown): ControlMessage {
  const o: Obj = obj(v, 'message');
  const type = str(o, 'type', 32);
  switch (type) {
    case 'join': {
      const m: Extract<ControlMessage, { type: 'join' }> = { type, version: int(o, 'version'), peerPort: int(o, 'peerPort', 1, 65535), hostname: str(o, 'hostname', 255), pid: int(o, 'pid') };
      const advertise = optStr(o, 'advertise', 255);
      const token = optStr(o, 'token', 1024);
      if (advertise !== undefined) m.advertise = advertise;
      if (token !== undefined) m.token = token;
      if (o.model !== undefined && o.model !== null) m.model = intArray(o, 'model', 1);
      return m;
    }
    case 'assign': {
      const ringKey = bytes(o, 'ringKey');
      if (ringKey.byteLength !== 32) throw new ProtocolError('field "ringKey": expected 32 bytes');
      return { type, rank: int(o, 'rank'), world: int(o, 'world', 1), runId: str(o, 'runId', 64), ringKey, prevHost: str(o, 'prevHost', 255), prevPort: int(o, 'prevPort', 0, 65535), config: validateRunConfig(o.config) };
    }
    case 'ready':
      return { type, rank: int(o, 'rank') };
    case 'run':
      return { type, scheme: oneOf(o, 'scheme', SCHEMES) };
    case 'step':
      return { type, rank: int(o, 'rank'), scheme: oneOf(o, 'scheme', SCHEMES), metrics: stepMetrics(o.metrics) };
    case 'done':
      return { type, summary: summary(o.summary) };
    case 'checkpoint':
      return { type, scheme: oneOf(o, 'scheme', SCHEMES), step: int(o, 'step', 1), rank: int(o, 'rank'), file: str(o, 'file') };
    case 'finish':
      return { type };
    case 'abort':
      return { type, reason: str(o, 'reason') };
    default:
      throw new ProtocolError(`unknown message type ${JSON.stringify(type)}`);
  }
}

export function validateHello(v: unknown): PeerHello {
  const o = obj(v, 'hello');
  if (o.type !== 'hello') throw new ProtocolError('peer connection: the first message must be a hello');
  const proof = bytes(o, 'proof');
  if (proof.byteLength !== 32) throw new ProtocolError('hello: field "proof" must be 32 bytes');
  return { type: 'hello', rank: int(o, 'rank'), runId: str(o, 'runId', 64), proof };
}

export function encodeMessage(m: ControlMessage | PeerHello): Buffer {
  return pack(m);
}

/** Decode msgpack bytes; throws ProtocolError (never a raw decoder error) on garbage. */
export function decodeMsgpack(data: Uint8Array): unknown {
  try {
    return unpack(data);
  } catch (err) {
    // The decoder's message can quote what it read; keep only its first words.
    throw new ProtocolError(`not a msgpack message (${(err as Error).message.split(/[{[]/)[0].trim().slice(0, 60)})`);
  }
}

export function decodeControl(data: Uint8Array): ControlMessage {
  return validateControl(decodeMsgpack(data));
}
