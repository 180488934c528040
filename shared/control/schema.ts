// What every schema of the wire and of the run config is made of, and the one way to apply one: valibot
// checks the value and derives its TypeScript type; a failure becomes a ProtocolError that names the field.
import * as v from 'valibot';

export class ProtocolError extends Error {
  override name = 'ProtocolError';
}

/** An integer in [min, max]. */
export const int = (min = 0, max = Number.MAX_SAFE_INTEGER) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/** A finite number (NaN and the infinities are refused: msgpack carries them, JSON reports could not). */
export const finite = v.pipe(v.number(), v.finite());

/** A string of at most `max` characters. */
export const text = (max = 4096) => v.pipe(v.string(), v.maxLength(max));

/** Binary data (msgpack bin: a Buffer, which is a Uint8Array). */
export const binary = v.custom<Uint8Array>((x) => x instanceof Uint8Array, 'binary data');

/** Binary data of exactly `n` bytes. */
export const binaryOf = (n: number) =>
  v.pipe(
    binary,
    v.check((b) => b.byteLength === n, `${n} bytes`),
  );

/** Where an issue happened, as `a.b[2].c`. */
export function issuePath(issue: v.BaseIssue<unknown>): string {
  let out = '';
  for (const p of issue.path ?? []) out += typeof p.key === 'number' ? `[${p.key}]` : `${out ? '.' : ''}${String(p.key)}`;
  return out;
}

/** A short, safe rendering of a value that failed a check (never the whole of a large input). */
function describe(x: unknown): string {
  if (x === undefined) return 'nothing';
  if (x instanceof Uint8Array) return `${x.byteLength} bytes of binary`;
  let s: string | undefined;
  try {
    s = JSON.stringify(x);
  } catch {
    s = undefined;
  }
  if (s === undefined) return typeof x;
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** What a failed check wanted, in words: our own message where a schema gave one (valibot's defaults all
 *  begin "Invalid"), else what valibot says it expected. */
function expectation(issue: v.BaseIssue<unknown>): string {
  if (!issue.message.startsWith('Invalid ')) return issue.message;
  const words: Record<string, string> = {
    number: 'a number',
    integer: 'an integer',
    finite: 'a finite number',
    string: 'a string',
    object: 'an object',
    array: 'an array',
  };
  return words[issue.type] ?? issue.expected ?? issue.message;
}

/** The first issue as one sentence: `field "metrics.loss": expected a number, got null`. */
export function issueText(issue: v.BaseIssue<unknown>): string {
  const path = issuePath(issue);
  return `${path ? `field "${path}": ` : ''}expected ${expectation(issue)}, got ${describe(issue.input)}`;
}

/** `value` checked against `schema`, typed; a ProtocolError naming `what` and the field otherwise. */
export function parse<S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> {
  const r = v.safeParse(schema, value, { abortEarly: true });
  if (r.success) return r.output;
  throw new ProtocolError(`${what}: ${issueText(r.issues[0])}`);
}
