// Every message between the coordinator and the ranks (the control plane), and the hello that opens a
// rank-to-rank connection: one valibot schema each, which gives both the TypeScript type and the check,
// and one encode/decode pair (msgpack). Data-plane chunk frames are in transport/frame.ts.
import { pack, Packr, unpack } from 'msgpackr';
import * as v from 'valibot';
import { RunConfigSchema, ALL_SCHEMES } from './run-config.js';
import { binary, binaryOf, finite, int, parse, ProtocolError, text } from './schema.js';

/** Bumped when a message changes: 2, final weights in pieces (`weights`) before the summary; 3, the pre-flight's
 *  round trips timed before any probe sends (`pinged`, `quiet`). */
export const PROTOCOL_VERSION = 3;

const scheme = v.picklist(ALL_SCHEMES);
const rank = int(0);
const numberRecord = v.record(v.string(), finite);
const hex64 = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/));

/** Bytes moved in one direction, all read from real objects. */
const TrafficSchema = v.object({
  payload: finite, // tensor data only
  envelope: finite, // msgpack envelopes around that data
  frame: finite, // everything the WebSocket carried (ws headers + envelope + payload + control frames), from the socket
});
export type Traffic = v.InferOutput<typeof TrafficSchema>;

/** One collective inside a step, as reported. */
const CollectiveBriefSchema = v.object({
  kind: text(32),
  ring: v.optional(v.union([v.picklist(['main', 'group', 'cross']), v.pipe(v.string(), v.regex(/^(group|cross)\+\d{1,4}$/))])), // which ring it ran on (absent: the run's)
  label: text(128),
  elements: int(),
  padded: int(),
  payload: finite, // bytes sent
  frame: finite,
  ms: finite,
  entry: finite, // when this rank entered it, on the run's common clock (ms)
  exit: finite, // ... and left it
});
export type CollectiveBrief = v.InferOutput<typeof CollectiveBriefSchema>;

/** One unit's forward or backward compute inside a step, or the optimizer update, on the run's common clock (ms). */
const UnitSpanSchema = v.object({
  unit: int(),
  pass: v.picklist(['forward', 'backward', 'optimizer']),
  start: finite,
  end: finite,
});

const QuantErrorSchema = v.object({ sumErr: finite, sumAbs: finite, maxErr: finite, maxAbs: finite });

const StepMetricsSchema = v.object({
  step: int(),
  loss: v.nullable(finite), // null: not computed (modeled compute, --compute model:...)
  startAt: finite, // when the step began, on the run's common clock (ms)
  stepMs: finite,
  computeMs: finite, // the step minus exposed communication
  commMs: finite, // wall time during which a collective was running
  exposedMs: finite, // time the step stood waiting for communication
  // the longest the rank's event loop was held up during the step (a timer's lateness, ms): a host short of CPU
  // stalls here whatever it was doing; one that waits on a slow link does not (absent: not measured, a simulation)
  loopLagMs: v.optional(finite),
  sent: TrafficSchema,
  recv: TrafficSchema,
  collectives: v.array(CollectiveBriefSchema),
  units: v.array(UnitSpanSchema),
  // data that really arrived from the previous rank: time some frame was arriving, its bytes, and how much
  // of both overlapped this rank's compute (a collective merely pending moves nothing and counts nothing)
  wire: v.object({ wireMs: finite, bytes: finite, hiddenMs: finite, hiddenBytes: finite }),
  bandPeaks: numberRecord, // highest live bytes per ledger band during the step
  pcie: v.optional(v.object({ d2h: finite, h2d: finite })), // offload: bytes copied between device and host
  offloadMs: v.optional(v.object({ pcie: finite, hostAdam: finite })), // ... and, modeled, their time and the host's Adam's
  // ZeRO++: what quantizing lost this step on this rank (values.ts's QuantError): qwZ its weight shards, qgZ the
  // gradients it sent
  quant: v.optional(v.object({ weights: v.optional(QuantErrorSchema), grads: v.optional(QuantErrorSchema) })),
});
export type StepMetrics = v.InferOutput<typeof StepMetricsSchema>;

const MemoryMetricsSchema = v.object({
  resident: numberRecord, // live bytes per band between steps
  peak: finite, // worst moment inside a step, model states + transients
  peakBands: numberRecord, // the bands at that moment
  peakPerBand: numberRecord, // highest live bytes per band, every band (staging, compute, receive buffers too)
  peakAll: finite, // highest sum of every band at one moment: all the ledger knows the rank holds
  peakAllBands: numberRecord, // the bands at that moment
  processBefore: finite, // ArrayBuffers + WebAssembly memories the process reported before the scheme allocated
  processPeak: finite, // ... highest sample while it ran (at every unit and around the optimizer update)
});

const SchemeSummarySchema = v.object({
  scheme,
  rank,
  params: int(), // unpadded parameter count
  paddedParams: int(), // as laid out for this world size
  steps: v.array(StepMetricsSchema),
  memory: MemoryMetricsSchema,
  socket: v.object({ sent: finite, recv: finite }), // TCP socket bytes over the whole scheme, handshakes included
  clock: v.object({ offsetMs: finite, uncertaintyMs: v.pipe(v.number(), v.minValue(0)) }), // this rank's clock vs the coordinator's
  iface: v.optional(v.object({ name: text(), tx: finite, rx: finite })), // the kernel's interface counters, when readable
  loopback: v.optional(v.object({ name: text(), tx: finite, rx: finite })), // the host's loopback ('lo'): what stayed on the host
  control: v.optional(v.object({ sent: finite })), // bytes this rank wrote to the coordinator during the scheme (step reports, clock)
  products: v.optional(text(512)), // what computed the products: the machine's BLAS, or the WebAssembly kernels
  // where forward and backward ran (--compute, resolved by the rank), or the modeled device (model:NAME)
  compute: v.optional(v.union([v.picklist(['inline', 'thread']), v.pipe(v.string(), v.regex(/^model:[a-z0-9]+$/))])),
  modeledMs: v.optional(v.array(finite)), // modeled compute per step (--compute model:...): the time waited for
  link: v.optional(v.object({ protocol: text(32), cipher: text(128) })), // what its ring links encrypt with (absent: plain)
  // fp32 bytes of its final master weights this rank sent in `weights` pieces before this summary (0: none)
  weightBytes: v.pipe(
    int(),
    v.check((n) => n % 4 === 0, 'fp32 bytes (a multiple of 4)'),
  ),
});
/** What a rank reports of a scheme, as sent. */
export type RankSummary = v.InferOutput<typeof SchemeSummarySchema>;
/** ... with the weights it sent before, put together by the coordinator (empty if it sent none). */
export type SchemeSummary = RankSummary & { master: Uint8Array };

/** The most bytes of weights one `weights` message carries. A rank's final weights go to the coordinator in
 *  pieces: as one message, DP's 134 MB at 33.6M parameters kept sender and coordinator busy packing, copying
 *  and unpacking for seconds, deaf to heartbeats on both ends. */
export const WEIGHT_PIECE_BYTES = 4 << 20;

/** One direction of one link as the pre-flight's receiver measured it (transport/link-probe.ts). */
const LinkProbeSchema = v.object({
  from: rank,
  to: rank,
  mbit: finite,
  mbitMulti: finite,
  streams: int(1, 64),
  rttMs: finite,
  plainMbit: v.optional(finite), // the same link over plain TCP (transport/plain-tcp.ts): the instrument's ceiling
  plainMbitMulti: v.optional(finite),
});

const ControlMessageSchema = v.variant('type', [
  v.object({
    type: v.literal('join'),
    version: int(),
    peerPort: int(1, 65535),
    advertise: v.optional(text(255)),
    hostname: text(255),
    pid: int(),
    token: v.optional(text(1024)),
    model: v.optional(text(400)), // join only a run of this model (as --model describes it: 64,256,10, gpt:2,64,4,32,64)
    rankId: v.optional(int(0, 65535)), // the rank id it asks for (RANK, JOB_COMPLETION_INDEX, --rank-id)
    worldSize: v.optional(int(1, 65536)), // the world size it expects (WORLD_SIZE)
    host: v.optional(text(255)), // its host, for grouping the ring (--host-id; default: its address)
    ringTls: v.optional(v.boolean()), // its ring port serves TLS (--tls-cert), and it dials peers over TLS
  }),
  v.object({
    type: v.literal('assign'),
    rank,
    world: int(1),
    runId: text(64),
    ringKey: binaryOf(32),
    prevHost: text(255),
    prevPort: int(0, 65535),
    hostRanks: int(1), // ranks on this rank's host (by hostname): --threads auto shares the cores among them
    // every rank's ring address, by rank id: what the hybrid scheme's sub-rings dial (only when it runs)
    peers: v.optional(v.array(v.object({ host: text(255), port: int(0, 65535) }))),
    hosts: v.optional(v.array(text(255))), // every rank's host, by rank id (the all-pairs pre-flight pairs hosts)
    config: RunConfigSchema,
  }),
  // links: what this rank's pre-flight measured, per link it received on (absent: none)
  v.object({ type: v.literal('ready'), rank, links: v.optional(v.array(LinkProbeSchema)), preflightMs: v.optional(finite) }),
  // the pre-flight: this rank has timed its round trips; and, once every rank has, the coordinator's word that
  // the probes may send (a round trip timed while another link's probe fills a shared queue reads that queue)
  v.object({ type: v.literal('pinged'), rank }),
  v.object({ type: v.literal('quiet') }),
  v.object({ type: v.literal('run'), scheme }),
  v.object({ type: v.literal('step'), rank, scheme, metrics: StepMetricsSchema }),
  // a piece of this rank's final fp32 master weights (its shard, or DP's padded model): bytes [offset, offset +
  // bytes.length) of `total`, in order, before its summary
  v.object({
    type: v.literal('weights'),
    scheme,
    rank,
    offset: int(),
    total: int(),
    bytes: v.pipe(
      binary,
      v.check((b) => b.byteLength > 0 && b.byteLength <= WEIGHT_PIECE_BYTES, `1 to ${WEIGHT_PIECE_BYTES} bytes`),
    ),
  }),
  v.object({ type: v.literal('done'), summary: SchemeSummarySchema }),
  // sha256: of the whole file; headerSha256: of its header, which lists a SHA-256 per block of its data (so a
  // reader that wants part of the file checks only what it reads)
  v.object({ type: v.literal('checkpoint'), scheme, step: int(1), rank, file: text(), sha256: hex64, headerSha256: v.optional(hex64) }),
  v.object({ type: v.literal('finish') }),
  // clock sync: a rank sends t0 (its clock), the coordinator answers at once with t1 (its clock)
  v.object({ type: v.literal('clock'), t0: finite, t1: v.optional(finite) }),
  // suspect: the ring peer whose link failed, when that is why this rank stops
  v.object({ type: v.literal('abort'), reason: text(), suspect: v.optional(rank) }),
]);
export type ControlMessage = v.InferOutput<typeof ControlMessageSchema>;

/** Opens a rank-to-rank connection. `proof` = HMAC-SHA256(ringKey, runId|rank): only ranks the coordinator
 *  admitted to this run know the ring key, so nobody else can feed frames into the ring. */
const PeerHelloSchema = v.object({
  type: v.literal('hello'),
  rank,
  runId: text(64),
  proof: binaryOf(32),
  // a hybrid scheme's sub-ring, or a pre-flight probe connection (probe:N, link-probe.ts); absent: the main ring
  ring: v.optional(v.union([v.picklist(['group', 'cross']), v.pipe(v.string(), v.regex(/^(probe:\d{1,4}|(group|cross)\+\d{1,4})$/))])),
});
export type PeerHello = v.InferOutput<typeof PeerHelloSchema>;

function validateControl(x: unknown): ControlMessage {
  return parse(ControlMessageSchema, x, 'message');
}

export function validateHello(x: unknown): PeerHello {
  return parse(PeerHelloSchema, x, 'peer hello');
}

/** msgpackr packs into one buffer that it keeps for the next message, grown to up to 4x the largest message
 *  so far: after a 4 MiB scheme summary it held 20 MiB for the rest of the run (measured). A large message
 *  gets its own copy instead, and msgpackr a small buffer back. */
const LARGE_MESSAGE = 1 << 20;
const packer = new Packr();

export function encodeMessage(m: ControlMessage | PeerHello): Buffer {
  const packed = pack(m);
  if (packed.byteLength < LARGE_MESSAGE) return packed;
  const own = Buffer.allocUnsafe(packed.byteLength); // a memcpy: Buffer.from(buffer) copies element by element
  own.set(packed);
  packer.useBuffer(Buffer.alloc(64 * 1024));
  return own;
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
