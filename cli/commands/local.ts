// `zerowire local`: a coordinator and --world rank processes on this machine.
import { print } from '../print.js';
import { createLogger } from '../log.js';
import { runLocal } from '../local.js';
import { refuseOnThisMachine } from '../local-checks.js';
import { runHelp, runOptions, type Cli } from '../options.js';
import { jobOptions } from '../job.js';
import { readingText } from '../model-options.js';
import { readTls, tlsArgv, tlsOptions } from '../tls-options.js';

export function localCommand(y: Cli, exit: (code: number) => void): Cli {
  return y.command(
    'local',
    'a coordinator and --world rank processes on this machine',
    (y) =>
      runHelp(tlsOptions(runOptions(y)), [
        ['$0 local', '4 ranks, DP against ZeRO-1/2/3 on the default MLP (what npm start runs, about 10 s)'],
        ['$0 local --model gpt:4,128,4,64 --batch 16 --steps 150 --lr 1e-3', 'a small GPT learning a generated text (~1 min)'],
        ['$0 local --compute model:h200 --model llama2-7b --steps 2', "a 7B shape at an H200's modeled compute, every collective real"],
        ['$0 local --scheme dp,zero3 --html report.html', 'two schemes, the report with its figures as a page'],
      ]),
    async (a) => {
      const log = createLogger(a.logLevel, 'local', a.logFormat, a.wide);
      const { model, deepspeed, ...job } = jobOptions(a, '127.0.0.1', 0, false);
      refuseOnThisMachine(job.config, job.world as number, model.text);
      if (model.reading) print(a, `${readingText(model)}\n`);
      if (deepspeed) print(a, `${deepspeed}\n`);
      const tls = readTls(a); // the ranks read the same files
      exit(await runLocal({ ...job, tls, world: job.world as number, logLevel: a.logLevel, logFormat: a.logFormat, wide: a.wide, rankArgs: tlsArgv(a) }, log));
    },
  );
}
