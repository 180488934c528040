// Reading a report back (`plan --run`, `compare`): the JSON a run wrote with --out, checked enough that a
// wrong file is named as such instead of failing somewhere inside.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../control/run-config.js';
import type { Report } from './report.js';

export function readReport(file: string, option: string): Report {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`${option} ${file}: ${(err as Error).message}`);
  }
  const r = parsed as Partial<Report> | null;
  if (!r || r.tool !== 'zerowire' || !Array.isArray(r.rows) || !r.config)
    throw new ConfigError(`${option} ${file}: not a zerowire report (the JSON a run writes with --out)`);
  return r as Report;
}
