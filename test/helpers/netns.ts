// Can this process make network namespaces (root, iproute2)? Where not, the LAN tests skip and say why.
import { spawnSync } from 'node:child_process';

export function netnsAvailable(): { ok: boolean; why: string } {
  if (process.getuid?.() !== 0) return { ok: false, why: 'not root: network namespaces need root' };
  const probe = `zwprobe${process.pid}`;
  const add = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (add.error || add.status !== 0) return { ok: false, why: `ip netns does not work here: ${add.error?.message ?? add.stderr.trim()}` };
  spawnSync('ip', ['netns', 'del', probe]);
  return { ok: true, why: 'root with ip netns' };
}

export function namespaces(): string[] {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
}
