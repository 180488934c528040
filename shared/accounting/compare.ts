// Runs side by side, scheme by scheme: what differs between them (encrypted links, world, model, wire
// dtype, ...) and what each costs per step, as a ratio to the first. It answers "what did TLS (or the slower
// link, the other world size) cost?" from two reports of otherwise equal runs.
import { textTable } from './table.js';
import type { Report } from './report.js';

export interface NamedReport {
  name: string;
  report: Report;
}

/** A setting's value as a person writes it: lists with commas, a resume as scheme@step, no checksums. */
function settingValue(key: string, value: unknown): string {
  if (value === undefined) return '-';
  if (Array.isArray(value)) return value.join(',');
  if (key === 'resume' && value && typeof value === 'object')
    return Object.entries(value as Record<string, { step: number; from?: { scheme: string; world: number } }>)
      .map(([scheme, x]) => `${scheme}@${x.step}${x.from ? ` (from ${x.from.scheme} at world ${x.from.world})` : ''}`)
      .join(',');
  if (key === 'checkpoint' && value && typeof value === 'object') return `every ${(value as { every: number }).every} steps`;
  if (key === 'adapt' && value && typeof value === 'object') {
    const { lora, freeze } = value as NonNullable<Report['config']['adapt']>;
    const parts = [
      lora && `--lora ${lora.rank},${lora.alpha}${lora.targets ? ` --lora-targets ${lora.targets.join(',')}` : ''}`,
      freeze && `--freeze ${freeze.join(',')}`,
    ];
    return parts.filter(Boolean).join(' ');
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A run's settings as the comparison names them: the config's fields, and whether links were encrypted. */
function settings(r: Report): Record<string, string> {
  const out: Record<string, string> = { world: String(r.world), links: r.links?.encrypted ? 'TLS' : 'plain' };
  // Named as the options are written (wireDtype -> wire-dtype, schemes -> scheme).
  const name = (k: string) => (k === 'schemes' ? 'scheme' : k === 'adapt' ? 'fine-tuning' : k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
  for (const [k, v] of Object.entries(r.config)) if (k !== 'seed' && k !== 'runId') out[name(k)] = settingValue(k, v);
  return out;
}

/** The settings that are not the same in every run, as `setting: A → B`. */
function differences(runs: NamedReport[]): string[] {
  const all = runs.map((x) => settings(x.report));
  const keys = [...new Set(all.flatMap(Object.keys))];
  const absent = (k: string) => (k === 'fine-tuning' ? 'none' : '-');
  return keys.filter((k) => new Set(all.map((s) => s[k])).size > 1).map((k) => `${k}: ${all.map((s) => s[k] ?? absent(k)).join(' → ')}`);
}

/** Thrown when the reports have no scheme in common: there is nothing to set side by side. */
export class NothingInCommon extends Error {}

export function compareReports(runs: NamedReport[]): string {
  if (runs.length < 2) throw new Error('compare needs two reports or more');
  const schemes = runs[0].report.rows.map((x) => x.scheme).filter((s) => runs.every((r) => r.report.rows.some((x) => x.scheme === s)));
  const titles = (r: Report) => r.rows.map((x) => x.title).join(', ') || 'none';
  if (!schemes.length)
    throw new NothingInCommon(`the reports share no scheme (${runs.map((r) => `${r.name}: ${titles(r.report)}`).join('; ')}): nothing to set side by side`);
  const leftOut = [...new Set(runs.flatMap((r) => r.report.rows.filter((x) => !schemes.includes(x.scheme)).map((x) => x.title)))];
  const ms = (v: number) => v.toFixed(1);
  const head = [
    ['', ...runs.flatMap((r, i) => [r.name, '', '', ...(i ? [''] : [])])],
    ['scheme', ...runs.flatMap((_, i) => ['step ms', 'compute', 'exposed', ...(i ? ['step ×'] : [])])],
  ];
  const body = schemes.map((s) => {
    const rows = runs.map((r) => r.report.rows.find((x) => x.scheme === s)!);
    return [
      rows[0].title,
      ...rows.flatMap((x, i) => [
        ms(x.time.stepMs),
        ms(x.time.computeMs),
        ms(x.time.exposedMs),
        ...(i ? [`${(x.time.stepMs / rows[0].time.stepMs).toFixed(2)}`] : []),
      ]),
    ];
  });
  const diff = differences(runs);
  return [
    textTable(head, body),
    '',
    `runs, in order: ${runs.map((r) => r.name).join(' → ')}`,
    diff.length ? `what differs: ${diff.join('; ')}` : 'what differs: nothing in the config or links (a repeat run: the ratios are the noise)',
    ...(leftOut.length ? [`left out (not in every report): ${leftOut.join(', ')}`] : []),
    "step × = step time as a multiple of the first run's; figures are means per step over ranks (the first step excluded), as in each report",
  ].join('\n');
}
