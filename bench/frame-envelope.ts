// Why the data path's frame envelope is parsed by hand (transport/frame.ts) while every other message goes
// through a valibot schema: the cost per frame of both ways, measured side by side in alternating rounds.
// A 64 MiB all-reduce on 4 ranks with 1 MiB chunks handles ~100 frames per rank; a step of a small model
// with 64 KiB chunks, thousands.
import { pack, unpack } from 'msgpackr';
import * as v from 'valibot';
import { binary, int, parse } from '../shared/control/schema.js';
import { decodeChunkEnvelope, encodeChunkEnvelope } from '../shared/transport/frame.js';

const u32 = int(0, 0xffffffff);
const Envelope = v.tuple([v.literal('data'), u32, u32, u32, v.picklist([0, 1]), u32, binary]);
const FRAMES = 200_000;
const ROUNDS = 5;

const header = { coll: 12345, step: 2, chunk: 7, dtype: 'fp32' as const, elements: 262144 };
const envelope = encodeChunkEnvelope(header, header.elements * 4);
// The same header as generic msgpack with an empty payload: what a schema-checked decode would read.
const generic = pack(['data', header.coll, header.step, header.chunk, 0, header.elements, new Uint8Array(0)]);

function byHand(): number {
  let sum = 0;
  for (let i = 0; i < FRAMES; i++) sum += decodeChunkEnvelope(envelope)!.header.chunk;
  return sum;
}

function bySchema(): number {
  let sum = 0;
  for (let i = 0; i < FRAMES; i++) sum += parse(Envelope, unpack(generic), 'data frame')[3];
  return sum;
}

function time(fn: () => number): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / FRAMES; // ns per frame
}

const hand: number[] = [];
const schema: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  hand.push(time(byHand));
  schema.push(time(bySchema));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`frame envelope, ${FRAMES} frames x ${ROUNDS} alternating rounds (median ns per frame)`);
console.log(`  by hand (36-byte fixed layout)      ${median(hand).toFixed(0).padStart(6)} ns`);
console.log(`  msgpack + valibot tuple schema      ${median(schema).toFixed(0).padStart(6)} ns`);
console.log(`  schema / hand                        ${(median(schema) / median(hand)).toFixed(1)}x`);
