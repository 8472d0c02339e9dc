#!/usr/bin/env node
// @ts-check
/**
 * Replays the tmux corpus (tests/goldens/tmux/manifest.json lists it) as docs/goldens.md describes,
 * validating every file against docs/schema.json first. Exit 0 when every case agrees.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { answer, PROGRAMS } from './lib/cli.mjs';
import { canonical, deepEqual } from './lib/json.mjs';
import { decide, written } from './lib/program.mjs';
import { decode, ref, SCHEMA, validate } from './lib/schema.mjs';
import { ownerFromAnswer, verdictFromAnswer } from './lib/tmux.mjs';

const CORPUS = fileURLToPath(new URL('../../tests/goldens/tmux/', import.meta.url));
const failures = /** @type {string[]} */ ([]);
let checks = 0;

/** @param {string} where @param {unknown} got @param {unknown} want */
function same(where, got, want) {
  checks++;
  if (!deepEqual(got, want)) failures.push(`${where}\n    got:  ${canonical(/** @type {any} */ (got), false)}\n    want: ${canonical(/** @type {any} */ (want), false)}`);
}

/** @param {string} dir @returns {string[]} */
const walk = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  return statSync(path).isDirectory() ? walk(path) : name.endsWith('.json') ? [path] : [];
});

/** @param {any} data @param {string} where */
function parseGolden(data, where) {
  for (const c of data.cases) {
    const proc = decode(c.answer, ref('Proc'));
    if ('verdict' in c) same(`${where} ${c.name}`, verdictFromAnswer(c.target, proc), decode(c.verdict, ref('Verdict')));
    else same(`${where} ${c.name}`, ownerFromAnswer(proc), decode(c.owner, ref('OwnerAnswer')));
  }
}

/** The index of the first entry that does not fit, when the decision says so. @param {any} decision @param {number} length */
function firstMisfit(decision, length) {
  const problem = decision.outcome?.result?.problem;
  return problem && String(problem.code).startsWith('journal_') ? problem.at : length;
}

/** @param {any} data @param {string} where */
function decisionGolden(data, where) {
  const described = SCHEMA.operations[data.operation];
  const program = PROGRAMS[data.operation];
  if (!described || !program) return void failures.push(`${where}: operation ${data.operation} is not implemented`);
  const problem = validate(data.request, described.request) ?? validate(data.decision, described.decision);
  if (problem) return void failures.push(`${where}: ${problem}`);
  const request = decode(data.request, ref(described.request));
  const journal = data.journal.map((/** @type {any} */ e) => decode(e, ref('Entry')));
  const want = decode(data.decision, ref(described.decision));
  const made = want.outcome?.result?.changesMade;  // steps as written: decoding filled in their null fields
  if (Array.isArray(made)) want.outcome.result.changesMade = made.map(written);
  for (let i = 0; i < firstMisfit(want, journal.length); i++) {
    same(`${where} step ${i}`, decide(() => program(request), journal.slice(0, i)), { kind: 'next', steps: [written(journal[i].step)] });
  }
  same(`${where} decision`, decide(() => program(request), journal), want);
}

/** @param {any} data @param {string} where */
function decideGolden(data, where) {
  for (const c of data.cases) {
    const { exit_code, stdout, stderr } = c;
    same(`${where} ${c.name}`, answer(c.stdin), { exit_code, stdout, stderr });
  }
}

const manifest = JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8'));
const listed = new Set(manifest.files.map((/** @type {any} */ f) => f.path));
for (const path of walk(CORPUS)) {
  if (!listed.has(relative(CORPUS, path))) failures.push(`${relative(CORPUS, path)}: not in manifest.json`);
}
const problem = validate(manifest, 'Manifest');
if (problem) failures.push(`manifest.json: ${problem}`);
const counts = /** @type {{[kind: string]: number}} */ ({});
for (const file of manifest.files) {
  const data = JSON.parse(readFileSync(join(CORPUS, file.path), 'utf8'));
  const invalid = validate(data, file.schema);
  if (invalid) { failures.push(`${file.path}: does not validate against ${file.schema}: ${invalid}`); continue; }
  if (data.format_version.split('.')[0] !== SCHEMA.format_version.split('.')[0]) failures.push(`${file.path}: format_version`);
  counts[file.kind] = (counts[file.kind] ?? 0) + 1;
  if (file.kind === 'parse') parseGolden(data, file.path);
  else if (file.kind === 'decision') decisionGolden(data, file.path);
  else if (file.kind === 'decide') decideGolden(data, file.path);
}
const summary = Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ');
if (failures.length) {
  process.stdout.write(`FAIL ${failures.length} of ${checks} checks (${summary})\n  ${failures.join('\n  ')}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(`ok: ${checks} checks over ${manifest.files.length} files (${summary})\n`);
}
