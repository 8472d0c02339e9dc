#!/usr/bin/env node
// @ts-check
/**
 * Reads what `panefleet decide` reads on stdin and prints what it prints (stdout, stderr, exit code).
 * `--batch`: every stdin line is a JSON string (one question's stdin); every output line is the
 * JSON object {"exit_code", "stdout", "stderr"} of its answer.
 */
import { answer } from './lib/cli.mjs';
import { canonical } from './lib/json.mjs';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks).toString('utf8');

if (process.argv.includes('--batch')) {
  const out = [];
  for (const line of input.split('\n')) {
    if (line.trim() !== '') out.push(canonical(/** @type {any} */ (answer(JSON.parse(line))), false));
  }
  process.stdout.write(out.map((l) => l + '\n').join(''));
} else {
  const { exit_code: code, stdout, stderr } = answer(input);
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = code;
}
