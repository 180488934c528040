// Runs that cannot work are refused before a rank starts: exit 2, one line naming the option and what to do,
// within 2 s, nothing on stdout and no process started (the coordinator never said it was waiting).
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';

describe('impossible runs are refused up front', () => {
  it.each([
    [
      ['local', '--model', 'llama2-7b'],
      /^zerowire: --model llama2-7b: 6,738,415,616 parameters need at least .* per rank \(ZeRO-3\).*: a named shape runs as a modeled accelerator: add --compute model:h200/,
    ],
    [
      ['local', '--model', '65536,65536,10', '--world', '2'],
      /^zerowire: --model 65536,65536,10: 4,295,688,202 parameters need .*: fewer --world ranks, a smaller --model, or --compute model:h200/,
    ],
    [
      ['local', '--scheme', 'hsdp', '--world', '3', '--batch', '48'],
      /^zerowire: --scheme hsdp: --world 3 cannot form 2 groups of 2 ranks or more \(HSDP's smallest is --world 4 --shard-group 2\)$/,
    ],
    [
      ['local', '--scheme', 'hsdp', '--world', '4'],
      /^zerowire: --scheme hsdp: local runs every rank on this one host, .* give --shard-group 2 \(ranks per group/,
    ],
    [['local', '--scheme', 'hsdp', '--world', '4', '--shard-group', '3'], /^zerowire: --scheme hsdp: --shard-group 3 does not divide the world of 4 ranks$/],
    [['coordinator', '--scheme', 'hsdp', '--world', '4', '--shard-group', '4'], /^zerowire: --scheme hsdp: --shard-group 4 on 4 ranks makes 1 group\(s\) of 4/],
    [
      ['local', '--scheme', 'dp,hsdp', '--world', '4', '--shard-group', '2', '--checkpoint-every', '1', '--checkpoint-dir', '/tmp/zw-none'],
      /^zerowire: --scheme hsdp: its checkpoints are not written yet/,
    ],
    [['local', '--lr', 'abc'], /^zerowire: --lr: "abc" is not a number$/],
    [['local', '--steps', '2', '--steps=1'], /^zerowire: --steps: given 2 times: give it once$/],
    [['local', '--steps=x'], /^zerowire: --steps: "x" is not a number$/],
    [
      ['local', '--max-rank-memory', '1MB'],
      /^zerowire: --max-rank-memory: model of 1055242 parameters on 4 ranks does not fit in 977 KiB per rank: .* No scheme fits\.$/,
    ],
    [['local', '--out', '/proc/no-such-dir/report.json'], /^zerowire: --out: cannot write in \/proc\/no-such-dir \(ENOENT\)$/],
    [['local', '--bogus'], /^zerowire: Unknown argument: bogus \(see zerowire local --help\)$/],
    [
      ['local', '--hf-config', 'test/fixtures/hf/qwen2-1.5b.json'],
      /^zerowire: --hf-config: vocabulary 151936 is more than 65536: train it with --compute model:PRESET/,
    ],
    [['plan', '--hf-config', '/no/such/config.json', '--world', '8'], /^zerowire: --hf-config \/no\/such\/config.json: no such file$/],
    [['local', '--model', '64,10', '--hf-config', 'test/fixtures/hf/gpt2.json'], /^zerowire: --model and --hf-config: give one of them$/],
    [['local', '--model', '64,32,10', '--seq', '8'], /^zerowire: --seq: only for a decoder/],
    [['local', '--lora', '0'], /^zerowire: --lora: "0" must be R\[,ALPHA\] with R a positive integer/],
    [['local', '--model', '64,8,10', '--lora', '16'], /^zerowire: --lora: rank 16 is larger than layers\.0's smaller side \(8 x 64\)$/],
    [
      ['local', '--model', 'gpt:2,32,2,16', '--lora', '4', '--lora-targets', 'q_proj'],
      /^zerowire: --lora-targets: "q_proj" names no Linear layer of this model \(attn\.qkv, attn\.proj, mlp\.fc, mlp\.proj, head\)$/,
    ],
    [['local', '--model', '64,32,10', '--freeze', 'layers.0-1'], /^zerowire: --freeze: layers\.0-1 leaves nothing to train$/],
    [['local', '--model', '64,32,10', '--lora', '4', '--freeze', 'layers'], /^zerowire: --lora with --freeze: layers leaves nothing to train$/],
    [
      ['local', '--model', 'gpt:2,32,2,16', '--freeze', 'blocks.5'],
      /^zerowire: --freeze: "blocks\.5" names no group of this model \(embeddings, blocks\.I or blocks\.I-J, head\)$/,
    ],
    [['local', '--lora-targets', 'layers.0'], /^zerowire: --lora-targets: only with --lora R/],
  ])('%j', async (args, message) => {
    const t0 = Date.now();
    const r = await runCli(args as string[], 20_000);
    const ms = Date.now() - t0;
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(message as RegExp);
    expect(r.stderr).not.toMatch(/waiting for|joined|\[proc|\[rank/);
    expect(ms, `refused after ${ms} ms`).toBeLessThan(2000);
  });
});
