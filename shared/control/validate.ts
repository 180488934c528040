// A few lines of runtime checking for messages that arrive from the network.
// Each checker returns the value typed, or throws ProtocolError naming the field.

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

export type Obj = Record<string, unknown>;

export function obj(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ProtocolError(`${what}: expected an object`);
  return v as Obj;
}

export function int(o: Obj, key: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new ProtocolError(`field "${key}": expected an integer in [${min}, ${max}], got ${describe(v)}`);
  }
  return v;
}

export function num(o: Obj, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new ProtocolError(`field "${key}": expected a finite number, got ${describe(v)}`);
  return v;
}

export function str(o: Obj, key: string, maxLen = 4096): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length > maxLen) throw new ProtocolError(`field "${key}": expected a string, got ${describe(v)}`);
  return v;
}

export function optStr(o: Obj, key: string, maxLen = 4096): string | undefined {
  return o[key] === undefined || o[key] === null ? undefined : str(o, key, maxLen);
}

export function oneOf<T extends string>(o: Obj, key: string, allowed: readonly T[]): T {
  const v = o[key];
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    throw new ProtocolError(`field "${key}": expected one of ${allowed.join('|')}, got ${describe(v)}`);
  }
  return v as T;
}

export function bool(o: Obj, key: string): boolean {
  const v = o[key];
  if (typeof v !== 'boolean') throw new ProtocolError(`field "${key}": expected a boolean, got ${describe(v)}`);
  return v;
}

export function intArray(o: Obj, key: string, min = 0): number[] {
  const v = o[key];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'number' || !Number.isInteger(x) || x < min)) {
    throw new ProtocolError(`field "${key}": expected an array of integers >= ${min}`);
  }
  return v as number[];
}

export function bytes(o: Obj, key: string): Uint8Array {
  const v = o[key];
  if (!(v instanceof Uint8Array)) throw new ProtocolError(`field "${key}": expected binary data, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v instanceof Uint8Array) return `${v.byteLength} bytes of binary`;
  const s = JSON.stringify(v);
  return s === undefined ? typeof v : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** A WebSocket close reason must fit in 123 bytes of UTF-8; cut on a character boundary, never throw. */
export function closeReason(text: string): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > 123) break;
    out += ch;
    bytes += n;
  }
  return out;
}
