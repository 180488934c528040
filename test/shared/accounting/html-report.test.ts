// --html: the report as a user opens it, in a real headless Chromium (Debian's, driven by playwright-core):
// it loads with no console error and fetches nothing, every figure is there with one series per scheme, and
// a screenshot is kept in test/artifacts/ to look at. The same run checks that the memory ledger accounts
// for what the process holds.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../../shared/accounting/report.js';
import { runCli } from '../../helpers/cli.js';

const CHROMIUM = process.env.ZEROWIRE_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url));
// As the machine's notes say: without these, Chromium reaches for Google's hosts at every start.
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SCHEMES = ['DP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3'];

/** `file` opened as a user opens it: every console error and every fetch beyond the file itself noted. */
async function openPage(browser: Browser, file: string): Promise<{ page: Page; errors: string[]; fetched: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const errors: string[] = [];
  const fetched: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => errors.push(String(e)));
  const url = pathToFileURL(file).href;
  await page.route('**/*', (route) => {
    if (route.request().url() !== url) fetched.push(route.request().url());
    return route.request().url() === url ? route.continue() : route.abort();
  });
  await page.goto(url);
  return { page, errors, fetched };
}

describe('--html', () => {
  it('opens in headless Chromium with no console error, fetches nothing, and draws every figure with one series per scheme', async () => {
    expect(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: install Debian's chromium package (.ci/run does) or set ZEROWIRE_CHROMIUM`).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-html-'));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const file = join(dir, 'report.html');
      const r = await runCli(
        [
          'local',
          '--world',
          '2',
          '--scheme',
          'all',
          '--model',
          '16,64,64,4',
          '--batch',
          '8',
          '--samples',
          '32',
          '--steps',
          '4',
          '--html',
          file,
          '--out',
          join(dir, 'report.json'),
        ],
        60_000,
      );
      expect(r.code, r.stderr).toBe(0);
      // The ledger accounts for what the rank holds: never more than the process reports, and all but a
      // little (the socket and encoder buffers of the transport) of it.
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
      for (const row of report.rows) {
        const { tracked, process } = row.memory;
        expect(tracked.bytes, row.title).toBeLessThanOrEqual(process);
        expect(process - tracked.bytes, `${row.title}: bytes the ledger does not know of`).toBeLessThan(4 << 20);
        for (const band of ['master', 'compute', 'receive', 'data']) expect(tracked.bands[band], `${row.title} ${band}`).toBeGreaterThan(0);
      }
      const html = readFileSync(file, 'utf8');
      expect(html).not.toMatch(/<script/i); // drawn at report time: nothing runs when it opens

      const { page, errors, fetched } = await openPage(browser, file);

      // The table: a row per scheme.
      expect(await page.locator('section.run tbody tr td:first-child').allTextContents()).toEqual(SCHEMES);
      // The network section: the pre-flight's links as a heat map, a cell per ring link.
      expect(await page.locator('section.network table.heat td[style*="background"]').count()).toBeGreaterThanOrEqual(4);
      expect((await page.locator('section.network h3').allTextContents())[0]).toMatch(/^Links before the run \(pre-flight, ring, [\d.]+ s\)/);
      // The loss caption says what this run's agreement says: one line where the losses were identical.
      const caption = await page.locator('figure#loss figcaption').textContent();
      expect(caption).toMatch(report.agreement!.maxLossDiff === 0 ? /identical at every step/ : /differed by [\d.e-]+ at most/);
      // Every figure, each with all four schemes among its drawn labels.
      const ids = await page.locator('figure').evaluateAll((fs) => fs.map((f) => f.id));
      expect(ids).toEqual(['time', 'traffic', 'memory', 'memory-full', 'loss']);
      for (const id of ids) {
        const labels = await page.locator(`figure#${id} svg text`).allTextContents();
        for (const s of SCHEMES) expect(labels, `figure ${id} names ${s}`).toContain(s);
        const box = await page.locator(`figure#${id} svg`).first().boundingBox();
        expect(box!.width * box!.height, `figure ${id} has a size`).toBeGreaterThan(10_000);
      }
      // The loss figure: one line per scheme; the time figure: a stack per scheme.
      expect(await page.locator('figure#loss svg g.mark-line path').count()).toBe(SCHEMES.length);
      const timeBars = await page.locator('figure#time svg g.mark-rect path').count();
      expect(timeBars).toBeGreaterThanOrEqual(SCHEMES.length);

      // The step bars add up to the step the table gives (its 'total', to 0.1 ms); the bar of communication
      // under compute is drawn over them, not added; every legend entry has a bar.
      const bars = await page
        .locator('figure#time svg path[aria-roledescription="bar"]')
        .evaluateAll((ps) => ps.map((p) => p.getAttribute('aria-label') ?? ''));
      const stacked = new Map<string, number>();
      const parts = new Set<string>();
      for (const label of bars) {
        const m = /^Scheme: (.+?); ms per step: ([-\d.e+]+); part: ([^;]+)/.exec(label);
        expect(m, label).not.toBeNull();
        parts.add(m![3]);
        if (!m![3].startsWith('comm. under compute')) stacked.set(m![1], (stacked.get(m![1]) ?? 0) + Number(m![2]));
      }
      const heads = await page.locator('section.run thead tr:last-child th').allTextContents();
      const total = heads.indexOf('total');
      expect(total).toBeGreaterThan(0);
      for (const [i, scheme] of SCHEMES.entries()) {
        const cell = await page.locator(`section.run tbody tr:nth-child(${i + 1}) td:nth-child(${total + 1})`).textContent();
        expect(Math.abs(stacked.get(scheme)! - Number(cell)), `${scheme}: bars ${stacked.get(scheme)} against the table's ${cell}`).toBeLessThanOrEqual(0.051);
      }
      const legend = await page.locator('figure#time svg g[aria-roledescription="legend"] text').allTextContents();
      expect(legend.length).toBeGreaterThan(0);
      for (const entry of legend) expect([...parts], `legend entry ${entry}`).toContain(entry);
      // At 1280 px the table fits its page: no column cut off.
      await page.setViewportSize({ width: 1280, height: 900 });
      const fit = await page
        .locator('section.run div.wide')
        .first()
        .evaluate((d) => [d.scrollWidth, d.clientWidth]);
      expect(fit[0], 'the table is no wider than the page at 1280 px').toBeLessThanOrEqual(fit[1]);

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
      expect(errors).toEqual([]);
      expect(fetched).toEqual([]);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("plan --need's page as the README's case draws it, in a 1280 px window: every answer readable, a dot at each, ZeRO-2 over ZeRO-1 dashed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-need-'));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const file = join(dir, 'need.html');
      const r = await runCli(
        ['plan', '--need', '10', '--compute', 'model:h100', '--model', 'llama2-7b', '--world', '32', '--hosts', '4', '--html', file],
        60_000,
      );
      expect(r.code, r.stderr).toBe(0);
      const answered = [...r.stdout.matchAll(/^(\S+) +(\d+) +[\d.]+ +[\d.]+ +\d+$/gm)].map((m) => ({ scheme: m[1], gbit: Number(m[2]) }));
      expect(answered.map((x) => x.scheme)).toContain('ZeRO-3'); // 1329 Gbit/s: past the table's 400
      const { page, errors, fetched } = await openPage(browser, file);
      await page.setViewportSize({ width: 1280, height: 900 });
      // No table cut at the window's edge: each is as wide as what it shows.
      for (const pre of await page.locator('pre').all()) {
        const { scroll, client } = await pre.evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
        expect(scroll, (await pre.textContent()) ?? undefined).toBeLessThanOrEqual(client + 1);
        const box = await pre.boundingBox();
        expect(box!.x + box!.width).toBeLessThanOrEqual(1280);
      }
      for (const a of answered)
        await expect(page.locator('pre').first().textContent()).resolves.toMatch(new RegExp(`^${a.scheme.replace('+', '\\+')} +${a.gbit} `, 'm'));
      // A dot for every answer, wherever it falls (the axis spans them all).
      expect(await page.locator('figure#need svg g.mark-symbol.role-mark path').count()).toBe(answered.length);
      // ZeRO-1 and ZeRO-2 predict the same step here: the second drawn dashed so the first shows.
      expect(await page.locator('figure#need svg g.mark-line path[stroke-dasharray]').count()).toBeGreaterThan(0);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'plan-need-readme.png'), fullPage: true });
      expect(errors).toEqual([]);
      expect(fetched).toEqual([]);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("plan --need's page: opens with no console error, fetches nothing, a line per scheme that fits and a rule where the fastest changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'zerowire-need-'));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const file = join(dir, 'need.html');
      const args = [
        'plan',
        '--need',
        '10',
        '--compute',
        'model:h100',
        '--model',
        'llama2-7b',
        '--world',
        '32',
        '--hosts',
        '4',
        '--recompute',
        '--intra-gbit',
        '1600',
        '--batch',
        '128',
        '--accumulate',
        '4', // four micro-batches a step: the fastest changes (ZeRO-1 to ZeRO++) below 400 Gbit/s
      ];
      const r = await runCli([...args, '--html', file], 60_000);
      expect(r.code, r.stderr).toBe(0);
      const html = readFileSync(file, 'utf8');
      expect(html).not.toMatch(/<script/i);
      const { page, errors, fetched } = await openPage(browser, file);
      const fits = ['ZeRO-1', 'ZeRO-2', 'ZeRO-3', 'HSDP', 'ZeRO++']; // DP does not fit an 80 GB card
      expect(await page.locator('figure#need').getAttribute('data-schemes')).toBe(fits.join('|'));
      const labels = await page.locator('figure#need svg text').allTextContents();
      for (const s of fits) expect(labels, `the figure names ${s}`).toContain(s);
      expect(await page.locator('figure#need svg g.mark-line path').count()).toBe(fits.length);
      expect(
        labels.some((l) => /fastest from [\d.]+ Gbit\/s/.test(l)),
        'a rule where the fastest scheme changes',
      ).toBe(true);
      const box = await page.locator('figure#need svg').first().boundingBox();
      expect(box!.width * box!.height).toBeGreaterThan(100_000);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'plan-need.png'), fullPage: true });
      expect(errors).toEqual([]);
      expect(fetched).toEqual([]);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
