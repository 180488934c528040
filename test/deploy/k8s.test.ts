// deploy/k8s: every manifest validated against the Kubernetes API schema (kubernetes-models), and what a
// schema cannot see: that the manifests agree with each other (world size, names, selectors, ports, the
// token Secret), that nothing restarts a run, and that they agree with zerowire's own options and plan.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { k8sResources, plan } from '../../cli/plan.js';
import { modelSpec, parseModel } from '../../shared/models/registry.js';
import { runCli } from '../helpers/cli.js';

const DIR = fileURLToPath(new URL('../../deploy/k8s/', import.meta.url));
const MODELS = { Job, Service, PersistentVolumeClaim } as const;

interface Manifest {
  file: string;
  kind: keyof typeof MODELS;
  metadata: { name: string };
  spec: Record<string, unknown>;
}
interface Container {
  name: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { containerPort: number }[];
  resources: { requests: { memory: string; cpu: string } };
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodSpec {
  restartPolicy: string;
  subdomain?: string;
  containers: Container[];
  volumes: { name: string; secret?: { secretName: string } }[];
}

function manifests(): Manifest[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => {
        expect(d.errors, file).toEqual([]);
        return { ...(d.toJS() as Omit<Manifest, 'file'>), file };
      }),
    );
}

function validate(m: Manifest): void {
  const Model = MODELS[m.kind];
  if (!Model) throw new Error(`${m.file}: no schema for kind ${m.kind}`);
  new Model(m as never).validate();
}

const all = manifests();
const find = (kind: string, name: string) => {
  const m = all.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`no ${kind} ${name} in deploy/k8s`);
  return m;
};
const pod = (job: Manifest) => (job.spec.template as { metadata: { labels: Record<string, string> }; spec: PodSpec }).spec;
const podLabels = (job: Manifest) => (job.spec.template as { metadata: { labels: Record<string, string> } }).metadata.labels;
const env = (c: Container, name: string) => c.env.find((e) => e.name === name)?.value;

describe('deploy/k8s', () => {
  it('every manifest is valid against the Kubernetes API schema, and the kustomization lists them all', () => {
    expect(all.map((m) => `${m.kind} ${m.metadata.name}`).sort()).toEqual([
      'Job zerowire-coordinator',
      'Job zerowire-rank',
      'PersistentVolumeClaim zerowire-results',
      'Service zerowire-coordinator',
      'Service zerowire-ranks',
    ]);
    for (const m of all) expect(() => validate(m), `${m.file}: ${m.kind} ${m.metadata.name}`).not.toThrow();
    const kustomization = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'))[0].toJS() as { resources: string[] };
    expect(kustomization.resources.sort()).toEqual([...new Set(all.map((m) => m.file))].sort());
  });

  it('the schema check can fail: a string where a count belongs, a container without a name', () => {
    const ranks = find('Job', 'zerowire-rank');
    expect(() => validate({ ...ranks, spec: { ...ranks.spec, completions: 'four' } })).toThrow(/completions must be integer/);
    const nameless = structuredClone(ranks);
    delete (pod(nameless).containers[0] as Partial<Container>).name;
    expect(() => validate(nameless)).toThrow(/containers\/0 must have required property name/);
  });

  it('the manifests agree with each other: world size, addresses, selectors, the Secret; nothing restarts a run', () => {
    const coordJob = find('Job', 'zerowire-coordinator');
    const coordSvc = find('Service', 'zerowire-coordinator');
    const ranksJob = find('Job', 'zerowire-rank');
    const ranksSvc = find('Service', 'zerowire-ranks');
    const coord = pod(coordJob).containers[0];
    const rank = pod(ranksJob).containers[0];

    const world = Number(env(coord, 'WORLD_SIZE'));
    expect(world).toBeGreaterThan(0);
    expect(ranksJob.spec.completionMode).toBe('Indexed'); // JOB_COMPLETION_INDEX: each pod's rank id
    expect(ranksJob.spec.completions).toBe(world);
    expect(ranksJob.spec.parallelism).toBe(world);
    expect(Number(env(rank, 'WORLD_SIZE'))).toBe(world);

    const port = (coordSvc.spec.ports as { port: number; targetPort: number }[])[0];
    expect(env(rank, 'MASTER_ADDR')).toBe(coordSvc.metadata.name);
    expect(Number(env(rank, 'MASTER_PORT'))).toBe(port.port);
    expect(coord.ports![0].containerPort).toBe(port.targetPort);
    expect(podLabels(coordJob)).toMatchObject(coordSvc.spec.selector as object);
    expect(podLabels(ranksJob)).toMatchObject(ranksSvc.spec.selector as object);
    expect(ranksSvc.spec.clusterIP).toBe('None');
    expect(pod(ranksJob).subdomain).toBe(ranksSvc.metadata.name);

    for (const job of [coordJob, ranksJob]) {
      expect(job.spec.backoffLimit, job.metadata.name).toBe(0);
      expect(pod(job).restartPolicy).toBe('Never');
      const c = pod(job).containers[0];
      const tokenVolume = pod(job).volumes.find((v) => v.secret)!;
      expect(tokenVolume.secret!.secretName).toBe('zerowire-token');
      const mount = c.volumeMounts.find((m) => m.name === tokenVolume.name)!;
      expect(env(c, 'ZEROWIRE_TOKEN_FILE')).toBe(`${mount.mountPath}/token`);
      expect(c.env.some((e) => e.name === 'ZEROWIRE_TOKEN')).toBe(false); // the token only ever comes from the Secret
    }
  });

  it("agrees with zerowire: every ZEROWIRE_* variable is an option of its command, and the ranks' memory is what plan says", async () => {
    for (const job of [find('Job', 'zerowire-coordinator'), find('Job', 'zerowire-rank')]) {
      const c = pod(job).containers[0];
      const help = await runCli([c.args[0], '--help'], 20_000);
      for (const e of c.env.filter((x) => x.name.startsWith('ZEROWIRE_'))) {
        const option = `--${e.name.slice('ZEROWIRE_'.length).toLowerCase().replace(/_/g, '-')}`;
        expect(help.stdout, `${job.metadata.name}: ${e.name} is ${option}`).toContain(option);
      }
    }
    const coord = pod(find('Job', 'zerowire-coordinator')).containers[0];
    const rank = pod(find('Job', 'zerowire-rank')).containers[0];
    const params = modelSpec({ model: parseModel(env(coord, 'ZEROWIRE_MODEL')!) }).params;
    const planned = k8sResources(plan(params, Number(env(coord, 'WORLD_SIZE')), undefined, 'bf16'), Number(rank.resources.requests.cpu));
    expect(planned).toContain(`memory: ${rank.resources.requests.memory}`);
  });

  it('the TLS overlay (deploy/k8s/tls): each Job patched still validates, mounts the zerowire-tls Secret, and points ZEROWIRE_TLS_* at its files', async () => {
    const overlay = join(DIR, 'tls');
    const k = parseAllDocuments(readFileSync(join(overlay, 'kustomization.yaml'), 'utf8'))[0].toJS() as {
      resources: string[];
      patches: { path: string; target: { kind: string } }[];
    };
    expect(k.resources).toEqual(['../']);
    expect(k.patches).toHaveLength(1);
    const ops = parseAllDocuments(readFileSync(join(overlay, k.patches[0].path), 'utf8'))[0].toJS() as { op: string; path: string; value: unknown }[];
    const jobs = all.filter((m) => m.kind === k.patches[0].target.kind);
    expect(jobs).toHaveLength(2);
    for (const job of jobs) {
      const patched = structuredClone(job);
      for (const op of ops) {
        // The overlay only appends to lists (what kustomize does with "add" and "/-").
        expect(op.op).toBe('add');
        const keys = op.path.split('/').slice(1);
        expect(keys.pop()).toBe('-');
        const list = keys.reduce<unknown>((o, key) => (o as Record<string, unknown>)[key], patched) as unknown[];
        expect(Array.isArray(list), `${job.metadata.name}: ${op.path}`).toBe(true);
        list.push(op.value);
      }
      expect(() => validate(patched), job.metadata.name).not.toThrow();
      const c = pod(patched).containers[0];
      const volume = pod(patched).volumes.find((v) => v.secret?.secretName === 'zerowire-tls')!;
      const mount = c.volumeMounts.find((m) => m.name === volume.name)!;
      for (const [name, file] of [
        ['ZEROWIRE_TLS_CERT', 'cert.pem'],
        ['ZEROWIRE_TLS_KEY', 'key.pem'],
        ['ZEROWIRE_TLS_CA', 'ca.pem'],
      ])
        expect(env(c, name), `${job.metadata.name} ${name}`).toBe(`${mount.mountPath}/${file}`);
      const help = await runCli([c.args[0], '--help'], 20_000);
      for (const option of ['--tls-cert', '--tls-key', '--tls-ca']) expect(help.stdout).toContain(option);
    }
  });
});
