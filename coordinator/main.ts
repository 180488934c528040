// `zerowire coordinator`: run a Coordinator, print the report, write the files asked for.
import type { Logger } from 'pino';
import { writeDump } from '../shared/io/dump.js';
import { checkResumable, latestIndex } from '../shared/io/checkpoint.js';
import { ALL_SCHEMES, ConfigError } from '../shared/control/run-config.js';
import { schemesUnder } from '../shared/accounting/fit.js';
import { RunPlan } from '../shared/accounting/run-plan.js';
import type { RunConfig, SchemeName } from '../shared/control/run-config.js';
import { buildReport, type Report } from '../shared/accounting/report.js';
import { finalParameters } from '../shared/accounting/final-weights.js';
import { formatReport } from '../shared/accounting/report-text.js';
import { wrapText } from '../shared/accounting/wrap.js';
import { networkReport, networkText } from '../shared/accounting/links.js';
import { buildTrace } from '../shared/accounting/trace.js';
import { renderHtmlReport } from '../shared/accounting/html-report.js';
import { crossHostLinks } from '../shared/accounting/ring-links.js';
import { isHybrid, schemeTitle } from '../shared/training/schemes/table.js';
import { writeFileAtomic } from '../shared/io/safetensors.js';
import { checkWritableDir, checkWritableFile } from '../shared/io/writable.js';
import { Coordinator } from './coordinator.js';
import type { CoordinatorOptions, RunResult } from './run-types.js';
import { ProgressLine } from './progress.js';

export interface CoordinatorJobOptions extends CoordinatorOptions {
  out?: string;
  trace?: string; // Chrome trace-event JSON of the run
  html?: string; // the report with its figures, one self-contained HTML file
  dump?: string;
  resumeDir?: string;
  width?: number; // how wide the printed report may be (a terminal's columns); absent: whole lines
}

/** Find, for every scheme of the run, the newest complete checkpoint under `dir`, and check it fits. */
async function resolveResume(opts: CoordinatorJobOptions, dir: string, log: Logger): Promise<void> {
  if (opts.world === 'auto') throw new ConfigError('--resume needs a fixed --world: the checkpoint is resharded for it as it loads');
  const resume: NonNullable<RunConfig['resume']> = {};
  const world = opts.world;
  for (const scheme of opts.config.schemes) {
    const { index, incomplete } = await checkpointFor(dir, scheme);
    const skipped = incomplete.length ? ` (newer ${incomplete.join(', ')} passed over: no index.json, so incomplete)` : '';
    if (!index) throw new ConfigError(`--resume ${dir}: no complete checkpoint there (complete = its index.json exists)${skipped}`);
    // Written by this scheme at this world size and unit: loaded as it is; otherwise resharded as it loads.
    const resharded = index.scheme !== scheme || index.world !== world || index.unit !== opts.config.unit;
    checkResumable(index, opts.config, world, resharded);
    const from = {
      scheme: index.scheme,
      world: index.world,
      unit: index.unit,
      sharded: index.sharded,
      ...(index.shardGroup ? { shardGroup: index.shardGroup } : {}),
    };
    const headers = index.headerSha256 ? { headerSha256: index.headerSha256 } : {};
    resume[scheme] = { step: index.step, dir, sha256: index.sha256, ...headers, ...(resharded ? { from } : {}) };
    const how = resharded ? `, resharded from ${index.scheme} at world ${index.world}` : '';
    log.info({ scheme, step: index.step, from: resharded ? from : undefined }, `resuming ${scheme} from step ${index.step}${how}${skipped}`);
  }
  opts.config.resume = resume;
}

/** The scheme's own newest complete checkpoint under `dir`, or else the newest of any other scheme's (a
 *  hybrid one only if its index records its shard group): what a run of `scheme` resumes from. */
async function checkpointFor(dir: string, scheme: SchemeName): ReturnType<typeof latestIndex> {
  const own = await latestIndex(dir, scheme);
  if (own.index) return own;
  const others = await Promise.all(ALL_SCHEMES.filter((s) => s !== scheme).map((s) => latestIndex(dir, s)));
  const usable = others.filter((o) => o.index && (!isHybrid(o.index.scheme) || o.index.shardGroup));
  const newest = usable.sort((a, b) => b.index!.step - a.index!.step)[0];
  return newest ?? own;
}

/** Refuse, before anything starts, a run that cannot fit or cannot write where it was told to: no rank is
 *  launched and nothing allocated for it. Throws a ConfigError (exit 2, one line) naming the option. */
async function refuse(opts: CoordinatorJobOptions, log: Logger): Promise<void> {
  if (opts.maxRankMemory !== undefined && opts.world !== 'auto') {
    // No scheme of the run fits: refused now. Some do: the rest are left out once the hosts are known (seating.ts).
    const under = schemesUnder(new RunPlan(opts.config, opts.world), opts.maxRankMemory);
    if (!under.anyFits) throw new ConfigError(`--max-rank-memory: ${under.fit.message}`);
    if (under.note) log.warn(`--max-rank-memory: ${under.fit.message} The others are left out.`);
    else log.info(under.fit.message);
  }
  try {
    if (opts.out) await checkWritableFile(opts.out, '--out');
    if (opts.trace) await checkWritableFile(opts.trace, '--trace');
    if (opts.html) await checkWritableFile(opts.html, '--html');
    if (opts.dump) await checkWritableDir(opts.dump, '--dump');
    if (opts.config.checkpoint) await checkWritableDir(opts.config.checkpoint.dir, '--checkpoint-dir');
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** What the coordinator tells the operator while it runs: joins, the world, the ring, progress, refusals. */
function narrate(coord: Coordinator, opts: CoordinatorJobOptions, log: Logger): ProgressLine {
  const progress = new ProgressLine(opts.world === 'auto' ? 0 : opts.world, opts.config.steps);
  coord.onCheckpoint = (scheme, step, index) => log.info({ scheme, step, index }, 'checkpoint complete');
  coord.onRefuse = (from, why) => log.warn({ from }, `refused a connection from ${from}: ${why}`);
  coord.onWorld = (world, how, short) => {
    progress.world = world;
    if (short) log.warn({ world, expected: opts.world }, `WORLD SIZE ${world}, NOT ${opts.world}: ${how}`);
    else log.info({ world }, `world size ${world}: ${how}`);
  };
  // Until the run starts an id is the join order, unless the rank asked for one; the ring line has the final ids.
  coord.onJoin = (r) =>
    log.info(
      { rank: r.requested ?? r.rank, address: `${r.address}:${r.peerPort}`, host: r.host, hostname: r.hostname, pid: r.pid },
      `rank ${r.requested ?? r.rank} joined`,
    );
  coord.onRing = (ranks) => {
    const cross = crossHostLinks(ranks.map((r) => r.host));
    const ring = ranks.map((r) => `${r.rank} (${r.host})`).join(' → ');
    log.info(
      { ring: ranks.map((r) => ({ rank: r.rank, host: r.host, hostname: r.hostname, pid: r.pid })) },
      `ring: ${ring} → 0; ${cross.filter(Boolean).length} of ${ranks.length} links cross hosts`,
    );
  };
  coord.onStep = (scheme, step, n, m) => progress.update(scheme, step, n, m, log);
  return progress;
}

/** The files asked for: the JSON report, the trace, the HTML page, the dump. */
async function writeOutputs(opts: CoordinatorJobOptions, result: RunResult, report: Report, log: Logger): Promise<void> {
  if (opts.out) {
    await writeFileAtomic(opts.out, JSON.stringify(report, null, 1));
    log.info({ path: opts.out }, 'report written');
  }
  if (opts.trace) {
    await writeFileAtomic(opts.trace, JSON.stringify(buildTrace(result.ranks, result.summaries)));
    log.info({ path: opts.trace }, 'trace written (open it in Perfetto or chrome://tracing)');
  }
  if (opts.html) {
    await writeFileAtomic(
      opts.html,
      await renderHtmlReport([{ label: '', report }], `zerowire: ${report.config.schemes.map(schemeTitle).join(', ')} on ${report.world} ranks`),
    );
    log.info({ path: opts.html }, 'HTML report written');
  }
  if (opts.dump) {
    const finals = new Map<SchemeName, Float32Array>();
    for (const [scheme, sums] of result.summaries) finals.set(scheme, finalParameters(result.plan, scheme, sums));
    const files = await writeDump(opts.dump, opts.config, result.world, finals);
    log.info({ files }, 'dump written');
  }
}

/** `zerowire links`: the pre-flight's figures and verdict, and --out as JSON; no training happened. */
async function linksReport(opts: CoordinatorJobOptions, result: RunResult, log: Logger): Promise<number> {
  const network = networkReport(result.preflight, result.ranks, new Map());
  process.stdout.write(`${wrapText(networkText(network).join('\n'), opts.width ?? Infinity)}\n`);
  if (opts.out) {
    const ranks = result.ranks.map(({ rank, address, host, hostname }) => ({ rank, address, host, hostname }));
    await writeFileAtomic(
      opts.out,
      JSON.stringify({ tool: 'zerowire', kind: 'links', createdAt: new Date().toISOString(), world: result.world, ranks, network }, null, 1),
    );
    log.info({ path: opts.out }, 'links report written');
  }
  return 0;
}

/** Listen, run, report. Resolves with the process exit code. `started` is told the port once listening. */
export async function runCoordinatorJob(opts: CoordinatorJobOptions, log: Logger, started?: (port: number, coord: Coordinator) => void): Promise<number> {
  await refuse(opts, log);
  if (opts.resumeDir) await resolveResume(opts, opts.resumeDir, log);
  const coord = new Coordinator(opts);
  const progress = narrate(coord, opts, log);
  const port = await coord.listen();
  if (opts.token === undefined && !/^(127\.|::1$|localhost$)/.test(opts.host))
    log.warn(
      { host: opts.host, port },
      `no join token: anyone who can reach port ${port} can join this run as a rank (set ZEROWIRE_TOKEN on the coordinator and the ranks)`,
    );
  log.info(
    { port, world: opts.world, schemes: opts.config.schemes },
    `waiting for ${opts.world === 'auto' ? 'ranks (world size: auto)' : `${opts.world} ranks`} on port ${port}`,
  );
  const stop = (sig: string) => void coord.abort(`coordinator received ${sig}`);
  process.once('SIGINT', stop).once('SIGTERM', stop);
  const orphaned = watchParent(() => void coord.abort('the process that started this run (npx or npm) ended'));
  started?.(port, coord);
  try {
    const result = await coord.run();
    // The ranks are done: let them go before the report is built (which can keep this process busy for
    // longer than their heartbeat limit).
    await coord.finish();
    progress.clear();
    log.debug(result.messages, `largest control message from a rank: ${result.messages.largest} bytes (cap ${result.messages.cap})`);
    if (opts.linksOnly) return await linksReport(opts, result, log);
    const report = buildReport(result.plan, result.ranks, result.summaries, result.notes, result.preflight);
    process.stdout.write(`${formatReport(report, opts.width)}\n`);
    // modeled compute has no values, so no losses to agree on (agreement null; the report says so)
    if (report.agreement && !report.agreement.agree) log.warn(report.agreement, 'schemes disagree beyond the bound each pair earns (see the agreement line)');
    await writeOutputs(opts, result, report, log);
    return 0;
  } catch (err) {
    progress.clear();
    log.error((err as Error).message);
    await coord.abort((err as Error).message);
    return 1;
  } finally {
    process.off('SIGINT', stop).off('SIGTERM', stop);
    clearInterval(orphaned);
  }
}

/** Started by npx or npm (which forward SIGINT and SIGTERM to this process: .npmrc), and that parent killed
 *  outright (SIGKILL, a crash): the run ends as on SIGTERM, not left training with no one to read it. Not
 *  otherwise: `nohup zerowire ... &` outliving its shell is what the user asked for. */
function watchParent(gone: () => void): NodeJS.Timeout | undefined {
  if (!process.env.npm_command && !process.env.npm_lifecycle_event) return undefined;
  const parent = process.ppid;
  const timer = setInterval(() => process.ppid !== parent && (clearInterval(timer), gone()), 250);
  return timer.unref();
}
