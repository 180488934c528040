// deploy/docker-compose.yml with --scale rank=4, driven by testcontainers, image built from the Dockerfile.
// The build takes the offline path (locally made base image, npm cache from the build context) because this
// machine has no registry; deploy/offline/prepare.sh makes both and is idempotent.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { DockerComposeEnvironment, StartedDockerComposeEnvironment } from 'testcontainers';
import type { Report } from '../../shared/accounting/report.js';
import { dockerEngine, IN_CI } from '../helpers/docker.js';

const engine = dockerEngine();
const repo = fileURLToPath(new URL('../..', import.meta.url));
if (!engine.ok && !IN_CI) console.warn(`compose test skipped: ${engine.why}`);

async function composeEnv(): Promise<Record<string, string>> {
  return {
    ZEROWIRE_IMAGE: 'zerowire:test',
    ZEROWIRE_NODE_IMAGE: 'zerowire-base:node24',
    ZEROWIRE_NPM_FLAGS: '--offline --cache /src/deploy/offline/npm-cache',
    ZEROWIRE_BLAS_PACKAGE: '',
    ZEROWIRE_RESULTS: results,
    ZEROWIRE_PORT: String(await freePort()),
    ZEROWIRE_MODEL: '64,512,512,10',
    ZEROWIRE_SETTLE: '2',
  };
}

// Not made beforehand, as in a fresh clone without deploy/results: Docker makes it (root's), and the coordinator
// writes as its owner (--as-owner-of).
const scratch = mkdtempSync(join(tmpdir(), 'zerowire-results-'));
const results = join(scratch, 'results');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!engine.ok && !IN_CI)('docker compose up --scale rank=4', () => {
  const downs: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const d of downs) await d().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Build the image (offline path), bring the compose project up with 4 ranks, and arrange its removal. */
  async function composeUp(
    project: string,
    extra: Record<string, string>,
    wait: (c: DockerComposeEnvironment) => DockerComposeEnvironment,
  ): Promise<StartedDockerComposeEnvironment> {
    execFileSync('bash', [join(repo, 'deploy/offline/prepare.sh')], { stdio: 'inherit' });
    // No registry here for the Ryuk reaper image: the test removes what it started itself (afterAll).
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    const { DockerComposeEnvironment } = await import('testcontainers');
    const compose = new DockerComposeEnvironment(join(repo, 'deploy'), 'docker-compose.yml')
      .withProjectName(project)
      .withBuild()
      .withEnvironment({ ...(await composeEnv()), ...extra })
      .withClientOptions({ executable: { standalone: true }, commandOptions: ['--scale', 'rank=4'] })
      .withStartupTimeout(240_000);
    const env = await wait(compose).up();
    downs.push(() => env.down({ timeout: 10_000 }));
    return env;
  }

  it('runs all four schemes across 4 rank containers, with the token, accumulation and a modeled device from the environment; the kernel sees the bytes the app counted', async () => {
    expect(engine.ok, `CI=true but ${engine.why}`).toBe(true);
    const { Wait } = await import('testcontainers');
    const project = `zwtest${process.pid}`;
    const settings = { ZEROWIRE_STEPS: '4', ZEROWIRE_TOKEN: 'secret123', ZEROWIRE_ACCUMULATE: '2', ZEROWIRE_COMPUTE: 'model:a100' };
    const env = await composeUp(project, settings, (c) => c.withDefaultWaitStrategy(Wait.forOneShotStartup()));

    const report = JSON.parse(readFileSync(join(results, 'report.json'), 'utf8')) as Report;
    // Every setting reached the run: the ranks joined with the token (no warning that anyone can join), and
    // the report shows the accumulation and the modeled device.
    const coordinator = env.getContainer(`${project}_coordinator_1`).getId();
    const logs = spawnSync('docker', ['logs', coordinator], { encoding: 'utf8' });
    expect(logs.stdout + logs.stderr).toMatch(/rank \d joined/);
    expect(logs.stdout + logs.stderr).not.toMatch(/no join token/);
    expect(logs.stdout + logs.stderr).not.toMatch(/secret123/);
    expect(report.config.accumulate).toBe(2);
    expect(report.device?.name).toBe('a100');
    expect(report.world).toBe(4);
    expect(report.ranks).toHaveLength(4);
    expect(new Set(report.ranks.map((r) => r.address)).size).toBe(4); // four containers, four addresses
    const dp = report.rows.find((r) => r.scheme === 'dp')!;
    const z3 = report.rows.find((r) => r.scheme === 'zero3')!;
    // With --accumulate 2, ZeRO-3 gathers and reduces every micro-batch where DP reduces once: 1.5 x 2.
    expect(z3.sentPerStep.payload / dp.sentPerStep.payload).toBeCloseTo(1.5 * 2, 4);
    expect(report.agreement).toBeNull(); // a modeled device: no values, so no losses to compare
    // The HTML report and the trace land next to report.json.
    const html = readFileSync(join(results, 'report.html'), 'utf8');
    for (const s of ['DP', 'ZeRO-1', 'ZeRO-2', 'ZeRO-3']) expect(html).toContain(`>${s}<`);
    const trace = JSON.parse(readFileSync(join(results, 'trace.json'), 'utf8')) as { traceEvents: { name: string }[] };
    expect(trace.traceEvents.filter((e) => e.name === 'process_name')).toHaveLength(4 + 1); // the ranks, and the ring links
    for (const row of report.rows) {
      const iface = row.sentPerStep.iface;
      expect(iface).not.toBeNull();
      // The interface carries at least what the app wrote, plus TCP/IP headers, ACKs and the control plane.
      expect(iface!).toBeGreaterThanOrEqual(row.sentPerStep.frame);
      expect(iface!).toBeLessThanOrEqual(1.1 * row.sentPerStep.frame);
    }
  }, 600_000);

  /** The README's command as written (docker-compose: Debian's docker.io has no compose plugin), with the
   *  offline build's settings and the results folder in the environment; its exit code and when it exited. */
  function readmeCommand(project: string, extra: Record<string, string>): Promise<{ code: number | null; exitedAt: number; out: string }> {
    return composeEnv().then(
      (env) =>
        new Promise((resolve) => {
          const child = spawn('docker-compose', ['up', '--build', '--scale', 'rank=4', '--exit-code-from', 'coordinator'], {
            cwd: join(repo, 'deploy'),
            env: { ...process.env, ...env, COMPOSE_PROJECT_NAME: project, ...extra },
          });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.stderr.on('data', (d: Buffer) => (out += d.toString()));
          child.on('close', (code) => resolve({ code, exitedAt: Date.now(), out }));
          downs.push(async () =>
            spawnSync('docker-compose', ['down', '-t', '2'], { cwd: join(repo, 'deploy'), env: { ...process.env, ...env, COMPOSE_PROJECT_NAME: project } }),
          );
        }),
    );
  }

  it("the README's command as written: the report is the results folder's owner's file; with the folder unwritable the command fails within 10 s of the coordinator", async () => {
    expect(engine.ok, `CI=true but ${engine.why}`).toBe(true);
    execFileSync('bash', [join(repo, 'deploy/offline/prepare.sh')], { stdio: 'inherit' });
    const owned = join(scratch, 'owned'); // a user's folder, not uid 1000's, not made writable for anyone else
    mkdirSync(owned);
    chownSync(owned, 4321, 4321);
    const run = await readmeCommand(`zwreadme${process.pid}`, { ZEROWIRE_RESULTS: owned, ZEROWIRE_STEPS: '2', ZEROWIRE_SCHEME: 'dp' });
    expect(run.code, run.out.slice(-2000)).toBe(0);
    expect(statSync(join(owned, 'report.json')).uid).toBe(4321);
    expect((JSON.parse(readFileSync(join(owned, 'report.json'), 'utf8')) as Report).world).toBe(4);

    const shut = join(scratch, 'shut');
    mkdirSync(shut);
    chownSync(shut, 4321, 4321);
    chmodSync(shut, 0o555);
    const project = `zwshut${process.pid}`;
    const failed = await readmeCommand(project, { ZEROWIRE_RESULTS: shut, ZEROWIRE_STEPS: '2', ZEROWIRE_SCHEME: 'dp' });
    expect(failed.out).toMatch(/--out: cannot write in \/results \(EACCES\)/);
    expect(failed.code).toBe(2);
    const finished = execFileSync('docker', ['inspect', '-f', '{{.State.FinishedAt}}', `${project}_coordinator_1`], { encoding: 'utf8' }).trim();
    const after = (failed.exitedAt - Date.parse(finished)) / 1000;
    console.log(`the coordinator failed; the command exited ${after.toFixed(1)} s later`);
    expect(after).toBeLessThan(10);
  }, 600_000);

  it('docker stop of one rank container: the coordinator names it within 2 s and the other containers exit non-zero', async () => {
    expect(engine.ok, `CI=true but ${engine.why}`).toBe(true);
    const { Wait } = await import('testcontainers');
    const project = `zwfault${process.pid}`;
    const env = await composeUp(project, { ZEROWIRE_STEPS: '100000', ZEROWIRE_SCHEME: 'zero3', ZEROWIRE_LOG_FORMAT: 'json' }, (c) =>
      c
        .withDefaultWaitStrategy(Wait.forLogMessage(/assigned; wiring the ring/))
        .withWaitStrategy(`${project}_coordinator_1`, Wait.forLogMessage(/ZeRO-3 step 1\//)),
    );
    const id = (name: string) => env.getContainer(name).getId();
    const coordinator = id(`${project}_coordinator_1`);
    const victim = id(`${project}_rank_2`);
    const stoppedAt = Date.now();
    execFileSync('docker', ['stop', '-t', '10', victim]);
    const exit = Number(execFileSync('docker', ['wait', coordinator], { encoding: 'utf8', timeout: 30_000 }).trim());
    expect(exit).toBe(1);
    const logs = spawnSync('docker', ['logs', coordinator], { encoding: 'utf8' });
    const error = (logs.stdout + logs.stderr)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; time: number; msg: string })
      .find((l) => l.level === 50);
    expect(error, 'the coordinator logged why it stopped').toBeDefined();
    expect(error!.time - stoppedAt).toBeLessThanOrEqual(2000);
    expect(error!.msg).toMatch(/rank \d \(.*\) during zero3 step \d+/);
    for (const n of [1, 3, 4]) {
      const code = Number(execFileSync('docker', ['wait', id(`${project}_rank_${n}`)], { encoding: 'utf8', timeout: 10_000 }).trim());
      expect(code, `rank container ${n}`).not.toBe(0);
    }
  }, 600_000);
});
