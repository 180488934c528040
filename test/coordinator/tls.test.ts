// A run over TLS: the coordinator serves wss:// and every ring link is TLS, with a cluster CA and a
// certificate it signed, as docs/deploy.md tells an operator to make them.
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, logLines, runCli, startCli } from '../helpers/cli.js';
import { makeCerts } from '../helpers/certs.js';

const certs = makeCerts();
afterAll(() => certs.remove());
const RUN = ['--model', '16,32,4', '--steps', '2', '--batch', '8', '--samples', '32', '--scheme', 'dp,zero3'];
const tls = ['--tls-cert', certs.cert, '--tls-key', certs.key, '--tls-ca', certs.ca];

/** A 2-rank coordinator serving wss:// with the cluster certificate; its URL once it listens. */
async function tlsCoordinator() {
  const coord = startCli(['coordinator', '--world', '2', '--port', '0', '--host', '127.0.0.1', '--tls-cert', certs.cert, '--tls-key', certs.key, ...RUN]);
  let stderr = '';
  coord.child.stderr!.on('data', (d) => (stderr += d));
  const port = () => logLines(stderr).find((l) => typeof l.port === 'number')?.port as number | undefined;
  expect(await eventually(() => port() !== undefined, 10_000)).toBe(true);
  return { coord, url: `wss://127.0.0.1:${port()}`, err: () => stderr };
}

describe('TLS everywhere', () => {
  it('ranks with the cluster certificate run encrypted; an untrusting rank, and one without a certificate, are refused with a reason', async () => {
    const { coord, url } = await tlsCoordinator();
    try {
      const untrusting = await runCli(['rank', '--coordinator', url, '--connect-timeout', '3'], 20_000);
      expect(untrusting.code).toBe(1);
      expect(untrusting.stderr).toMatch(/self.signed certificate|certificate/i);
      const plainRing = await runCli(['rank', '--coordinator', url, '--tls-ca', certs.ca, '--connect-timeout', '3'], 20_000);
      expect(plainRing.code).toBe(1);
      expect(plainRing.stderr).toMatch(/this run encrypts its links .*start the rank with --tls-cert and --tls-key/);
      const ranks = await Promise.all([0, 1].map(() => runCli(['rank', '--coordinator', url, ...tls, '--peer-host', '127.0.0.1'], 60_000)));
      for (const r of ranks) expect(r.code, r.stderr).toBe(0);
      const done = await coord.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toMatch(/ZeRO-3/);
      expect(done.stdout).toMatch(/links: encrypted, TLSv1\.3 TLS_\w+, on the coordinator connection and every ring link/);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });

  it('local --tls-cert: the same run encrypted end to end, plain without it; a key that is not PEM is a usage error', async () => {
    const r = await runCli(['local', '--world', '2', ...tls, ...RUN], 90_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/links: encrypted, TLSv1\.3/);
    const plain = await runCli(['local', '--world', '2', ...RUN], 90_000);
    expect(plain.stdout).toMatch(/links: not encrypted/);
    const notPem = await runCli(['local', '--world', '2', '--tls-cert', certs.ca, '--tls-key', certs.cert, ...RUN], 20_000);
    expect(notPem.code).toBe(2);
    expect(notPem.stderr).toMatch(/--tls-key .*: not a PEM private key/);
  });

  it('a rank serving a certificate the cluster CA did not sign: its peer refuses the link and the run stops naming why', async () => {
    const { coord, url, err } = await tlsCoordinator();
    try {
      const stranger = ['--tls-cert', certs.strangerCert, '--tls-key', certs.strangerKey, '--tls-ca', certs.ca];
      const ranks = await Promise.all([tls, stranger].map((t) => runCli(['rank', '--coordinator', url, ...t, '--peer-host', '127.0.0.1'], 60_000)));
      const done = await coord.done;
      expect(done.code).toBe(1);
      expect(ranks.some((r) => r.code !== 0)).toBe(true);
      expect(err() + ranks.map((r) => r.stderr).join('')).toMatch(/its TLS certificate is not signed by the CA this rank trusts/);
    } finally {
      coord.child.kill('SIGKILL');
    }
  });
});
