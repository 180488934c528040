// The control plane over wss:// with a certificate given on the command line.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'zerowire-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('wss:// coordinator', () => {
  it('ranks that trust the certificate run; a rank that does not is refused with a clear error', async () => {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    const coord = startCli([
      'coordinator',
      '--world',
      '2',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      '--model',
      '16,32,4',
      '--steps',
      '2',
      '--batch',
      '8',
      '--samples',
      '32',
      '--scheme',
      'zero3',
    ]);
    let err = '';
    coord.child.stderr!.on('data', (d) => (err += d));
    try {
      expect(await eventually(() => logLines(err).some((l) => typeof l.port === 'number'), 10_000)).toBe(true);
      const port = logLines(err).find((l) => typeof l.port === 'number')!.port as number;
      const untrusting = await runCli(['rank', '--coordinator', `wss://127.0.0.1:${port}`, '--connect-timeout', '3'], 20_000);
      expect(untrusting.code).toBe(1);
      expect(untrusting.stderr).toMatch(/self.signed certificate|certificate/i);
      const ranks = await Promise.all(
        [0, 1].map(() => runCli(['rank', '--coordinator', `wss://127.0.0.1:${port}`, '--tls-ca', cert, '--peer-host', '127.0.0.1'], 60_000)),
      );
      for (const r of ranks) expect(r.code).toBe(0);
      const done = await coord.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/ZeRO-3/);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });
});
