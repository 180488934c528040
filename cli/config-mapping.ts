// What a job's config file (--deepspeed, --fsdp) sets, as the command line would say it, and the table a run
// prints: each key, its value, what it became or why it was left aside. A flag given on the command line
// wins over the file, and the table says so.
import { ConfigError } from '../shared/control/run-config.js';
import type { RunOptions } from './run-config-options.js';

export interface Row {
  key: string;
  value: string;
  became: string;
}

/** What a config sets, as the command line would say it. */
export type Settings = Partial<
  Pick<
    RunOptions,
    | 'scheme'
    | 'overlap'
    | 'bucketMib'
    | 'gatherAhead'
    | 'persistThreshold'
    | 'offload'
    | 'qwz'
    | 'hpz'
    | 'qgz'
    | 'shardGroup'
    | 'accumulate'
    | 'batch'
    | 'wireDtype'
    | 'lr'
    | 'recompute'
    | 'recomputeRegather'
  >
>;

/** The flag of each option a config can set. */
const FLAG: Record<keyof Settings, string> = {
  scheme: '--scheme',
  overlap: '--overlap',
  bucketMib: '--bucket-mib',
  gatherAhead: '--gather-ahead',
  persistThreshold: '--persist-threshold',
  offload: '--offload',
  qwz: '--qwz',
  hpz: '--hpz',
  qgz: '--qgz',
  shardGroup: '--shard-group',
  accumulate: '--accumulate',
  batch: '--batch',
  wireDtype: '--wire-dtype',
  lr: '--lr',
  recompute: '--recompute',
  recomputeRegather: '--recompute-regather',
};

/** Reads a value of `o` at `key`, typed, the file and the key named on failure; "auto" passed through. */
export class Reader {
  readonly rows: Row[] = [];
  readonly set: Settings = {};
  readonly notes: string[] = [];
  /** Keys whose value was a string read as the number or truth value it spells. */
  private readonly coerced = new Set<string>();
  /** A key read under another name (canonical -> as written): its rows carry the name as written. */
  private readonly written = new Map<string, string>();
  constructor(
    readonly option: string, // --deepspeed, --fsdp
    readonly file: string,
    private readonly explicit: (flag: string) => boolean,
  ) {}

  /** `as` (the file's name for the key) is read as `key`. */
  alias(as: string, key: string): void {
    this.written.set(key, as);
  }

  /** The row of `key`: under the name the file wrote, and what that name was read as. */
  private row(key: string, v: unknown, became: string): Row {
    const as = this.written.get(key);
    return as ? { key: as, value: show(v), became: `read as ${key}: ${became}` } : { key, value: show(v), became };
  }

  check<T>(key: string, v: unknown, ok: (x: unknown) => x is T, want: string): T | 'auto' {
    if (v === 'auto') return 'auto';
    if (ok(v)) return v;
    // DeepSpeed's config is a pydantic model, which reads "0" as 0 and "true" as true (Qwen's published
    // ds_config_zero3.json has "stage3_prefetch_bucket_size": "0"): so do we, and the table says so
    const read = typeof v === 'string' ? fromString(v) : undefined;
    if (read !== undefined && ok(read)) {
      this.coerced.add(key);
      return read;
    }
    throw new ConfigError(`${this.option} ${this.file}: key "${this.written.get(key) ?? key}": expected ${want}, got ${JSON.stringify(v)}`);
  }

  /** `key` (its file value `v`) sets `field` to `to`, unless the command line gave that flag (then it wins). */
  put<K extends keyof Settings>(key: string, v: unknown, field: K, to: Settings[K], how = ''): void {
    const flag = FLAG[field];
    const read = this.coerced.has(key) ? `the string read as ${JSON.stringify(fromString(String(v)))}, as DeepSpeed reads it` : '';
    const why = [read, how].filter(Boolean).join('; ');
    const became = `${flag} ${String(to)}${why ? ` (${why})` : ''}`;
    if (this.explicit(flag)) this.rows.push(this.row(key, v, `${became}: the command line's ${flag} won`));
    else {
      this.set[field] = to;
      this.rows.push(this.row(key, v, became));
    }
  }

  aside(key: string, v: unknown, why: string): void {
    this.rows.push(this.row(key, v, `left aside: ${why}`));
  }
}

/** A string as pydantic's lax mode reads it for an int or a bool field: "12" is 12, "true"/"off" a truth
 *  value; anything else stays unread. */
export function fromString(v: string): number | boolean | undefined {
  const t = v.trim().toLowerCase();
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  if (['true', 'yes', 'on', 't', 'y'].includes(t)) return true;
  if (['false', 'no', 'off', 'f', 'n'].includes(t)) return false;
  return undefined;
}

const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};
export const isInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;
export const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
export const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A config file's table as a run prints it. */
export function mappingText(file: string, rows: Row[]): string {
  const [k, v] = [Math.max(...rows.map((x) => x.key.length)), Math.max(...rows.map((x) => x.value.length))];
  return [`${file} read as (key, value, what it became):`, ...rows.map((x) => `  ${x.key.padEnd(k)}  ${x.value.padEnd(v)}  ${x.became}`)].join('\n');
}

/** A flag given on the command line (or as its ZEROWIRE_ variable; a boolean's --no- form too): it wins over a
 *  config file. */
export function givenOnCommandLine(flag: string, argv = process.argv.slice(2)): boolean {
  const env = `ZEROWIRE_${flag.slice(2).replace(/-/g, '_').toUpperCase()}`;
  const no = `--no-${flag.slice(2)}`;
  return argv.some((x) => x === flag || x === no || x.startsWith(`${flag}=`)) || process.env[env] !== undefined;
}
