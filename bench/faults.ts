// npm run bench:faults [-- --kill 100 --stop 20 --cut 20 --rate 1gbit --seed N]      (root: network namespaces)
// Fault trials on the namespace LAN (deploy/lan/lan.sh, 4 hosts): in each, a job runs a random scheme, and
// at a random moment (a random delay after its first step; seeded, the seed printed) one random rank is
// SIGKILLed, SIGSTOPped, or its host's link is cut. Printed per trial and summed up: how long until the
// coordinator named a culprit, whether it named the right rank, how long until every other process had
// exited by itself, the job's exit code and how each rank ended (from its log: their exit codes are bash's
// to read, not ours), and whether any process was left. The bar: every fault named within 5 s, the right
// rank, no process left, the job exiting 1.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { Rng } from '../shared/training/rng.js';
import { textTable } from '../shared/accounting/table.js';

const argv = yargs(hideBin(process.argv))
  .option('kill', { type: 'number', default: 100, describe: 'SIGKILL trials' })
  .option('stop', { type: 'number', default: 20, describe: 'SIGSTOP trials' })
  .option('cut', { type: 'number', default: 20, describe: 'cut-link trials' })
  .option('rate', { type: 'string', default: '1gbit' })
  .option('hosts', { type: 'number', default: 4 })
  .option('seed', { type: 'number', describe: 'replay a run (printed at its start)' })
  .option('steps', { type: 'number', default: 100, describe: 'steps of each scheme (each lasts longer than the 1 s a fault may wait)' })
  .option('model', { type: 'string', default: '64,512,512,10', describe: 'small enough that a trial takes seconds' })
  .strict()
  .parseSync();

const LAN = fileURLToPath(new URL('../../deploy/lan/lan.sh', import.meta.url));
const SCHEMES = ['dp', 'zero1', 'zero2', 'zero3'] as const;
const DETECT_MS = 5000;

type Fault = 'kill' | 'stop' | 'cut';
interface Trial {
  n: number;
  fault: Fault;
  scheme: string;
  delayMs: number;
  victim: number;
  detectMs: number | null; // injection to the coordinator's verdict
  named: string; // the verdict
  right: boolean;
  exitedMs: number | null; // injection to the last surviving process gone
  codes: string; // the job's exit code, then how each rank ended by its log: e = its error line, 0 = finished, - = no word
  left: number; // processes still alive once the job ended
}

const seed = argv.seed ?? Math.floor(Math.random() * 2 ** 32);
const rng = new Rng(seed);
const int = (n: number) => Math.floor(rng.uniform() * n);

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const logLines = (text: string): Record<string, unknown>[] =>
  text.split('\n').flatMap((line) => {
    const at = line.indexOf('{');
    if (at < 0) return [];
    try {
      return [JSON.parse(line.slice(at)) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

async function until<T>(probe: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined || Date.now() > end) return v;
    await sleep(10);
  }
}

/** How each rank ended, by its log (the lan script's children are reaped by bash, so their exit codes are
 *  not ours to read): e = it logged its error (a rank then exits 1), 0 = run finished, - = no word. */
function endings(lines: Record<string, unknown>[], ranks: number[]): string {
  return ranks
    .map((pid) => (lines.some((l) => l.pid === pid && l.level === 50) ? 'e' : lines.some((l) => l.pid === pid && l.msg === 'run finished') ? '0' : '-'))
    .join('');
}

/** The LAN job of one trial, its log (JSON lines on stderr) gathered as it comes. */
function startJob(scheme: string): { job: ChildProcess; err: () => string; exit: Promise<number> } {
  const args = [
    LAN,
    '--hosts',
    String(argv.hosts),
    '--rate',
    argv.rate,
    '--',
    '--scheme',
    scheme,
    '--steps',
    String(argv.steps),
    '--model',
    argv.model,
    '--log-level',
    'debug',
  ];
  const job: ChildProcess = spawn('bash', args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, NODE: process.execPath, ZEROWIRE_LOG_FORMAT: 'json' },
  });
  let err = '';
  job.stderr!.on('data', (d) => (err += d));
  return { job, err: () => err, exit: new Promise<number>((r) => job.once('exit', (code) => r(code ?? 1))) };
}

/** The fault, on the victim rank's process or its host's link. */
function inject(fault: Fault, victim: { pid: number; host: string }, hostNs: string[]): void {
  if (fault === 'kill') process.kill(victim.pid, 'SIGKILL');
  else if (fault === 'stop') process.kill(victim.pid, 'SIGSTOP');
  else spawnSync('ip', ['-n', hostNs[Number(victim.host.split('.').pop()) - 2], 'link', 'set', 'eth0', 'down']);
}

async function trial(n: number, fault: Fault): Promise<Trial> {
  const scheme = SCHEMES[int(SCHEMES.length)];
  const delayMs = int(1000);
  const pick = int(argv.hosts);
  const { job, err: log, exit } = startJob(scheme);
  const result: Trial = { n, fault, scheme, delayMs, victim: -1, detectMs: null, named: '', right: false, exitedMs: null, codes: '', left: 0 };
  try {
    const ready = await until(() => /lan: ready (\S+) (\S+) (.*)/.exec(log()) ?? undefined, 20_000);
    const ring = await until(() => logLines(log()).find((l) => /^ring: /.test(String(l.msg))), 30_000);
    if (!ready || !ring) throw new Error(`the job did not start:\n${log().slice(-2000)}`);
    const hostNs = ready[3].trim().split(' ');
    const members = ring.ring as { rank: number; pid: number; host: string }[];
    const coordinatorPid = logLines(log()).find((l) => l.name === 'coordinator')!.pid as number;
    const victim = members[pick];
    result.victim = victim.rank;
    const stepped = await until(() => logLines(log()).find((l) => l.name === 'coordinator' && l.scheme === scheme && (l.step as number) >= 1), 120_000);
    if (!stepped) throw new Error(`no step of ${scheme} within 120 s:\n${log().slice(-2000)}`);
    await sleep(delayMs);
    const t0 = Date.now();
    inject(fault, victim, hostNs);
    const verdict = await until(() => logLines(log()).find((l) => l.level === 50 && l.name === 'coordinator'), 15_000);
    if (verdict) {
      result.detectMs = (verdict.time as number) - t0;
      result.named = String(verdict.msg);
      result.right = result.named.startsWith(`rank ${victim.rank} (`);
    }
    // Every process but a frozen victim must end by itself (a cut-off victim notices its silent coordinator).
    const survivors = [coordinatorPid, ...members.filter((m) => fault === 'cut' || m !== victim).map((m) => m.pid)];
    const gone = await until(() => (survivors.every((p) => !alive(p)) ? Date.now() : undefined), 15_000);
    result.exitedMs = gone === undefined ? null : gone - t0;
    if (fault === 'stop') process.kill(victim.pid, 'SIGKILL'); // the operator's part: nobody else can end a frozen process
    const code = await Promise.race([exit, sleep(20_000).then(() => -1)]);
    result.codes = `${code}:${endings(
      logLines(log()),
      members.map((m) => m.pid),
    )}`;
    result.left = [coordinatorPid, ...members.map((m) => m.pid)].filter(alive).length;
  } finally {
    if (job.exitCode === null) job.kill('SIGTERM');
    await exit;
  }
  return result;
}

const plan: Fault[] = [...Array<Fault>(argv.kill).fill('kill'), ...Array<Fault>(argv.stop).fill('stop'), ...Array<Fault>(argv.cut).fill('cut')];
process.stdout.write(
  `fault trials on a ${argv.hosts}-host namespace LAN at ${argv.rate}: ${argv.kill} SIGKILL, ${argv.stop} SIGSTOP, ${argv.cut} cut link; seed ${seed}\n`,
);
const trials: Trial[] = [];
for (const [i, fault] of plan.entries()) {
  const t = await trial(i + 1, fault);
  trials.push(t);
  process.stdout.write(
    `#${t.n} ${t.fault} rank ${t.victim} in ${t.scheme} +${t.delayMs} ms: named in ${t.detectMs ?? '-'} ms (${t.right ? 'right rank' : `WRONG: ${t.named.slice(0, 160)}`}), all exited in ${t.exitedMs ?? '-'} ms, job exit:rank endings ${t.codes}, left ${t.left}\n`,
  );
}

const rows = (['kill', 'stop', 'cut'] as const).flatMap((fault) => {
  const ts = trials.filter((t) => t.fault === fault);
  if (!ts.length) return [];
  const times = ts.map((t) => t.detectMs ?? Infinity).sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  const ok = ts.filter((t) => t.detectMs !== null && t.detectMs <= DETECT_MS && t.right && t.left === 0 && t.exitedMs !== null && /^1:/.test(t.codes));
  return [
    [
      fault,
      String(ts.length),
      `${q(0)}`,
      `${q(0.5)}`,
      `${q(0.95)}`,
      `${times[times.length - 1]}`,
      String(ts.filter((t) => t.right).length),
      String(ts.reduce((s, t) => s + t.left, 0)),
      `${ok.length}/${ts.length}`,
    ],
  ];
});
process.stdout.write(`\n${textTable([['fault', 'trials', 'min ms', 'median', 'p95', 'max', 'right rank', 'left', 'pass']], rows)}\nseed ${seed}\n`);
const failed = trials.filter((t) => !(t.detectMs !== null && t.detectMs <= DETECT_MS && t.right && t.left === 0));
process.exit(failed.length ? 1 : 0);
