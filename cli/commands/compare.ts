// `zerowire compare A.json B.json ...`: reports of runs side by side, with what differs between them.
import { compareReports, NothingInCommon } from '../../shared/accounting/compare.js';
import { ConfigError } from '../../shared/control/run-config.js';
import { readReport } from '../../shared/accounting/report-file.js';
import type { Cli } from '../options.js';

export function compareCommand(y: Cli): Cli {
  return y.command(
    'compare <reports..>',
    'reports of two or more runs (--out) side by side: step, compute and exposed time per scheme, and what differs',
    (y) =>
      y
        .positional('reports', { type: 'string', array: true, demandOption: true, describe: 'JSON reports written with --out' })
        .example('$0 compare plain.json tls.json', 'what TLS cost each scheme per step, as a ratio to the first run')
        .example('$0 compare w4.json w8.json w16.json', 'the same run at three world sizes'),
    (a) => {
      const files = a.reports as string[];
      if (files.length < 2) throw new RangeError(`compare: give two reports or more (got ${files.length})`);
      const runs = files.map((f) => ({ name: f.replace(/^.*\//, '').replace(/\.json$/, ''), report: readReport(f, 'compare') }));
      try {
        process.stdout.write(`${compareReports(runs)}\n`);
      } catch (err) {
        if (err instanceof NothingInCommon) throw new ConfigError(`compare: ${err.message}`);
        throw err;
      }
    },
  );
}
