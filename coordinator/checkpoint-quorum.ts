// A checkpoint exists once every rank has written its shard: the coordinator collects each rank's SHA-256
// for a scheme's step and, with the last one, writes the index that makes the checkpoint complete.
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import { writeIndex } from '../shared/io/checkpoint.js';
import { RankReports } from './rank-reports.js';

export class CheckpointQuorum {
  private readonly reports = new RankReports();
  private readonly checksums = new Map<string, { file: string[]; header: string[] }>(); // per scheme:step, each rank's SHA-256s
  private readonly writes: Promise<void>[] = [];

  constructor(
    private config: RunConfig,
    private readonly written: (scheme: SchemeName, step: number, index: string) => void,
    private readonly failed: (why: string) => void,
  ) {}

  /** The config the ranks run (the hybrid's shard group resolved): what the indexes record. */
  resolved(config: RunConfig): void {
    this.config = config;
  }

  /** Rank `rank` of `world` has its shard of `scheme` at `step` on disk. */
  add(dir: string, world: number, shard: { scheme: SchemeName; step: number; rank: number; sha256: string; headerSha256?: string }): void {
    const key = `${shard.scheme}:${shard.step}`;
    const sums = this.checksums.get(key) ?? { file: [], header: [] };
    sums.file[shard.rank] = shard.sha256;
    if (shard.headerSha256) sums.header[shard.rank] = shard.headerSha256;
    this.checksums.set(key, sums);
    // The index goes last: only when every rank's shard is on disk does the checkpoint exist.
    if (this.reports.add(key, world) < world) return;
    this.checksums.delete(key);
    this.writes.push(
      writeIndex(dir, this.config, world, shard.scheme, shard.step, sums.file, sums.header.filter(Boolean).length === world ? sums.header : undefined).then(
        (path) => this.written(shard.scheme, shard.step, path),
        (err) => this.failed(`cannot write the checkpoint index: ${(err as Error).message}`),
      ),
    );
  }

  /** Every index write started so far has ended. */
  async settled(): Promise<void> {
    await Promise.all(this.writes);
  }
}
