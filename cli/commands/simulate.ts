// `zerowire simulate`: the run's every rank on a virtual clock and a modeled network (simulator/), its report
// marked simulated; with --run, a LAN run's own config and measured links, the simulated step beside the
// measured one.
import { givenOnCommandLine } from '../config-mapping.js';
import { print, widthOf } from '../print.js';
import type { Argv } from 'yargs';
import { runHelp, runOptions, type Cli } from '../options.js';
import { createLogger } from '../log.js';
import { jobOptions, type RunArgv } from '../job.js';
import { readingText } from '../model-options.js';
import { readReport } from '../../shared/accounting/report-file.js';
import { formatReport } from '../../shared/accounting/report-text.js';
import type { Report } from '../../shared/accounting/report.js';
import { buildTrace } from '../../shared/accounting/trace.js';
import { renderHtmlReport } from '../../shared/accounting/html-report.js';
import { textTable } from '../../shared/accounting/table.js';
import { ConfigError, modeledDevice } from '../../shared/control/run-config.js';
import { writeFileAtomic } from '../../shared/io/safetensors.js';
import { schemeTitle } from '../../shared/training/schemes/table.js';
import { simulateOnWorker, type Simulation } from '../../simulator/simulate.js';
import { topologyFromOptions, topologyFromRun, type TopologyArgs } from '../simulate-topology.js';
import { collectiveSweep } from '../simulate-sweep.js';

type SimulateArgv = RunArgv & TopologyArgs & { run?: string; burstKib?: number; collective?: string; minBytes?: string; maxBytes?: string };

/** --burst-kib, checked. */
function burst(kib: number | undefined): { burstKiB?: number } {
  if (kib === undefined) return {};
  if (!(kib >= 0)) throw new ConfigError(`--burst-kib: ${kib} must be 0 or more KiB`);
  return { burstKiB: kib };
}

/** The run's options that a simulation has nothing to apply to: no sockets to secure, time out or join, no
 *  processes to watch, no checkpoints written. Left out of its help and refused when given. */
const NOT_SIMULATED = [
  'preflight',
  'timeout',
  'join-timeout',
  'heartbeat-timeout',
  'token',
  'token-file',
  'tls-cert',
  'tls-key',
  'tls-ca',
  'checkpoint-every',
  'checkpoint-dir',
  'resume',
];

function simulateOptions<T>(y: Argv<T>) {
  return runOptions(y)
    .option('hostfile', {
      type: 'string',
      describe: "DeepSpeed's hostfile (HOST slots=N a line): its slots the world, its lines the hosts (each of the same slots)",
    })
    .option('hosts', { type: 'number', describe: 'hosts the --world ranks fill in order (default: the --hostfile, or world / --shard-group, or 1)' })
    .option('nics', { type: 'number', default: 1, describe: 'NICs per host (a rank uses the one beside its GPU; a host its NICs together)' })
    .option('nic-gbit', { type: 'number', describe: "each NIC, Gbit/s each way (default 100; with --run, in place of the pre-flight's rate between hosts)" })
    .option('hop-us', {
      type: 'number',
      default: 5,
      describe: "with --transport ring: latency of one ring step between hosts, µs (NCCL's own per-hop figures otherwise)",
    })
    .option('transport', {
      type: 'string',
      default: 'nccl',
      describe: "nccl: NCCL's algorithm and protocol per collective (its tuning model); ring: zerowire's own ring, as a LAN run has it",
    })
    .option('burst-kib', {
      type: 'number',
      describe: "with --transport ring or --run: each host's link a token bucket of this many KiB at its rate (deploy/lan/lan.sh's tbf: 256)",
    })
    .option('run', {
      type: 'string',
      describe: "a LAN what-if run's JSON report (--out): simulate its config on the links its pre-flight measured, and print both steps",
    })
    .option('collective', {
      type: 'string',
      describe: 'all-reduce, all-gather or reduce-scatter: that collective alone over the --world ranks at doubling sizes, as nccl-tests prints it',
    })
    .option('min-bytes', { type: 'string', describe: "with --collective: the first size (nccl-tests' -b; 8, 64K, 1MiB; default 8)" })
    .option('max-bytes', { type: 'string', describe: "with --collective: the last size (nccl-tests' -e; default 8G)" });
}

/** Each scheme's simulated step beside what the run measured. */
function againstRun(sim: Report, run: Report): string {
  const by = new Map(sim.rows.map((r) => [r.scheme, r]));
  const pct = (a: number, b: number) => `${((100 * (a - b)) / b).toFixed(1)}%`;
  const body = run.rows
    .filter((x) => by.has(x.scheme))
    .map((x) => {
      const s = by.get(x.scheme)!.time;
      return [x.title, s.stepMs.toFixed(1), x.time.stepMs.toFixed(1), pct(s.stepMs, x.time.stepMs), s.exposedMs.toFixed(1), x.time.exposedMs.toFixed(1)];
    });
  return textTable(
    [
      ['', 'step ms', '', '', 'exposed ms', ''],
      ['scheme', 'simulated', 'measured', 'error', 'simulated', 'measured'],
    ],
    body,
  );
}

async function writeOutputs(a: SimulateArgv, sim: Simulation): Promise<void> {
  if (a.out) await writeFileAtomic(a.out, JSON.stringify(sim.report, null, 1));
  if (a.trace) {
    // one rank's steps: every rank runs the same schedule, and a thousand ranks' would not open
    const one = new Map([...sim.summaries].map(([s, sums]) => [s, sums.slice(0, 1)]));
    await writeFileAtomic(a.trace, JSON.stringify(buildTrace(sim.ranks.slice(0, 1), one)));
  }
  if (a.html) {
    const title = `zerowire (simulated): ${sim.report.config.schemes.map(schemeTitle).join(', ')} on ${sim.report.world} ranks`;
    await writeFileAtomic(a.html, await renderHtmlReport([{ label: 'simulated', report: sim.report }], title));
  }
}

export function simulateCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'simulate',
    "every rank's own step schedule in virtual time on a modeled network of hosts, GPUs and NICs (NCCL's algorithms)",
    (y) =>
      runHelp(
        simulateOptions(y),
        [
          [
            '$0 simulate --compute model:h100 --model llama2-7b --world 64 --hosts 8 --nics 4 --nic-gbit 200 --steps 2',
            '8 hosts of 8 H100s, 4 × 200 Gbit NICs each',
          ],
          ['$0 simulate --run lan.json', 'a LAN run simulated on the links it measured, beside what it measured'],
          [
            '$0 simulate --collective all-reduce --compute model:a100 --world 64 --hosts 8 --nics 8 --nic-gbit 200',
            "the network model's all-reduce at 8 B to 8 GiB, as nccl-tests prints it",
          ],
        ],
        [],
        NOT_SIMULATED,
      ),
    async (a) => {
      const given = NOT_SIMULATED.find((o) => givenOnCommandLine(`--${o}`));
      if (given) throw new ConfigError(`--${given}: a simulation has no processes, sockets or files of its own to apply it to`);
      const argv: SimulateArgv = a;
      const log = createLogger(argv.logLevel, 'simulate', a.logFormat, a.wide);
      let sim: Simulation;
      let measured: Report | null = null;
      if (argv.collective !== undefined) {
        if (argv.run !== undefined) throw new ConfigError('--collective with --run: the sweep runs on the network the options describe; give one of them');
        // the run's batch has no bearing on one collective: one row a rank, whatever the world
        const w = Number(argv.world);
        const { config, world } = jobOptions({ ...argv, batch: Number.isInteger(w) && w > 0 ? w * (argv.accumulate ?? 1) : argv.batch }, '127.0.0.1', 0, false);
        if (!modeledDevice(config))
          throw new ConfigError('--collective: name the GPU (--compute model:PRESET or --device FILE): the link inside a host is its own');
        print(argv, await collectiveSweep(argv as SimulateArgv & { collective: string }, topologyFromOptions(argv, config, world as number)));
        return exit(0);
      }
      if (argv.run !== undefined) {
        measured = readReport(argv.run, '--run');
        if (!measured.device) throw new ConfigError(`--run ${argv.run}: not a what-if run (its compute was not modeled: no --compute model:PRESET)`);
        sim = await simulateOnWorker(
          { ...measured.config, steps: Math.max(2, measured.config.steps) },
          { ...topologyFromRun(measured, argv.run, argv.nicGbit), ...burst(argv.burstKib) },
          log,
        );
      } else {
        const { model, deepspeed, config, world } = jobOptions(argv, '127.0.0.1', 0, false);
        if (model.reading) print(argv, `${readingText(model)}\n`);
        if (deepspeed) print(argv, `${deepspeed}\n`);
        sim = await simulateOnWorker(config, { ...topologyFromOptions(argv, config, world as number), ...burst(argv.burstKib) }, log);
      }
      print(argv, formatReport(sim.report, widthOf(argv)));
      if (measured) print(argv, `\nsimulated against measured (${argv.run}):\n${againstRun(sim.report, measured)}`);
      await writeOutputs(argv, sim);
      exit(0);
    },
  );
}
