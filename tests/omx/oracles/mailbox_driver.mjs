// Oracle for pure/omx/mailbox.py: runs oh-my-codex 0.20.3's own sendDirectMessage /
// markMessageNotified / markMessageDelivered (runtime bridge disabled) on temporary team folders and
// prints what each step left on disk: the worker's mailbox file, the lines appended to the team's
// events file and to every delivery log. Ids and clock are made deterministic: randomUUID() yields
// 00000000-0000-4000-8000-<n>, and `new Date()` without arguments yields 2026-03-04T05:06:07.000Z
// plus one second per call.
//
// Usage (not run by the test suite; the suite only reads the committed golden):
//   OMX_DIST=/tmp/omx-pack/package/dist node tests/omx/oracles/mailbox_driver.mjs \
//     > tests/goldens/omx/mailbox_oracle.json
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';

process.env.OMX_RUNTIME_BRIDGE = '0';
for (const key of ['OMX_ROOT', 'OMX_STATE_ROOT', 'OMX_TEAM_STATE_ROOT', 'OMX_TEAM_WORKER']) delete process.env[key];

let uuids = 0;
crypto.randomUUID = () => `00000000-0000-4000-8000-${String(++uuids).padStart(12, '0')}`;
syncBuiltinESMExports();

const RealDate = Date;
let ticks = 0;
const BASE = RealDate.parse('2026-03-04T05:06:07.000Z');
class FixedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(BASE + 1000 * ticks++);
    else super(...args);
  }
}
globalThis.Date = FixedDate;

const dist = process.env.OMX_DIST;
if (!dist) throw new Error('set OMX_DIST to the dist/ folder of oh-my-codex 0.20.3');
const state = await import(path.join(dist, 'team/state.js'));

const TEAM = 'alpha';
const WORKER = 'worker-1';
const LEADER = 'leader-fixed';
const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'omx-mailbox-oracle-')));

function listFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath ?? entry.path, entry.name));
}

function snapshot() {
  const files = {};
  for (const file of listFiles(base)) {
    if (file.endsWith('.jsonl') || file.endsWith('.ndjson')) files[path.relative(base, file)] = fs.readFileSync(file, 'utf8');
  }
  return files;
}

function appended(before, after) {
  const out = {};
  for (const [file, text] of Object.entries(after)) {
    const old = before[file] ?? '';
    if (text !== old) out[file] = text.slice(old.length).split('\n').filter((line) => line !== '');
  }
  return out;
}

function mailboxText(cwd, env = {}) {
  const root = env.OMX_ROOT ? path.join(env.OMX_ROOT, '.omx', 'state') : path.join(cwd, '.omx', 'state');
  const file = path.join(root, 'team', TEAM, 'mailbox', `${WORKER}.json`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
}

async function step(name, cwd, run, env = {}) {
  const before = snapshot();
  const mailboxBefore = mailboxText(cwd, env);
  Object.assign(process.env, env);
  let returned;
  try {
    returned = await run();
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
  }
  return {
    step: name,
    returned,
    mailbox_before: mailboxBefore,
    mailbox_after: mailboxText(cwd, env),
    appended: appended(before, snapshot()),
  };
}

async function newTeam(dirName, env = {}) {
  const cwd = path.join(base, dirName);
  fs.mkdirSync(cwd, { recursive: true });
  Object.assign(process.env, env);
  try {
    await state.initTeamState(TEAM, 'oracle task', 'executor', 1, cwd);
    const config = await state.readTeamConfig(TEAM, cwd);
    return { cwd, created_at: config.created_at };
  } finally {
    for (const key of Object.keys(env)) delete process.env[key];
  }
}

function seedMailbox(cwd, text) {
  const dir = path.join(cwd, '.omx', 'state', 'team', TEAM, 'mailbox');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${WORKER}.json`), text);
}

const send = (cwd, body) => () => state.sendDirectMessage(TEAM, LEADER, WORKER, body, cwd);
const notified = (cwd, id) => () => state.markMessageNotified(TEAM, WORKER, id, cwd);
const delivered = (cwd, id) => () => state.markMessageDelivered(TEAM, WORKER, id, cwd);

const scenarios = [];

{ // the ordinary life of a mailbox
  const team = await newTeam('main');
  const { cwd } = team;
  const steps = [];
  steps.push(await step('send_first', cwd, send(cwd, 'hello worker')));
  const first = steps[0].returned.message_id;
  steps.push(await step('send_second', cwd, send(cwd, 'second message')));
  steps.push(await step('send_duplicate_undelivered', cwd, send(cwd, 'hello worker')));
  steps.push(await step('mark_notified', cwd, notified(cwd, first)));
  steps.push(await step('mark_notified_again', cwd, notified(cwd, first)));
  steps.push(await step('mark_notified_unknown_id', cwd, notified(cwd, 'no-such-id')));
  steps.push(await step('mark_delivered', cwd, delivered(cwd, first)));
  steps.push(await step('mark_delivered_again', cwd, delivered(cwd, first)));
  steps.push(await step('mark_delivered_unknown_id', cwd, delivered(cwd, 'no-such-id')));
  steps.push(await step('send_duplicate_of_delivered', cwd, send(cwd, 'hello worker')));
  steps.push(await step('send_unicode', cwd, send(cwd, 'héllo "quoted" \\ back\nline\ttab \u2028 \u0001 </x> 😀 \ud800 end')));
  scenarios.push({ scenario: 'lifecycle', cwd: 'main', team_created_at: team.created_at, steps });
}

{ // an undelivered message with the same body written before this team was created is not a duplicate
  const team = await newTeam('stale');
  const { cwd } = team;
  seedMailbox(cwd, JSON.stringify({ worker: WORKER, messages: [{
    message_id: 'old-1', from_worker: LEADER, to_worker: WORKER, body: 'hello worker', created_at: '2020-01-01T00:00:00.000Z',
  }] }, null, 2));
  const steps = [await step('send_same_body_as_stale', cwd, send(cwd, 'hello worker'))];
  scenarios.push({ scenario: 'stale_message_before_team', cwd: 'stale', team_created_at: team.created_at, steps });
}

for (const [scenario, text] of [
  ['malformed_json', '{"worker": "worker-1", "messages": ['],
  ['wrong_worker', JSON.stringify({ worker: 'worker-2', messages: [] }, null, 2)],
  ['messages_not_array', JSON.stringify({ worker: WORKER, messages: {} }, null, 2)],
]) { // oh-my-codex reads these as an empty mailbox and overwrites them (panefleet refuses)
  const team = await newTeam(scenario);
  seedMailbox(team.cwd, text);
  const steps = [await step('send_over_unreadable', team.cwd, send(team.cwd, 'hello worker'))];
  scenarios.push({ scenario, cwd: scenario, team_created_at: team.created_at, steps });
}

{ // OMX_ROOT elsewhere: state and primary log under it; cwd/.omx/logs too when cwd/.omx/state/team exists
  const box = path.join(base, 'box');
  const env = { OMX_ROOT: box };
  const team = await newTeam('rooted', env);
  fs.mkdirSync(path.join(team.cwd, '.omx', 'state', 'team'), { recursive: true });
  const steps = [await step('send_with_omx_root', team.cwd, send(team.cwd, 'hello worker'), env)];
  scenarios.push({ scenario: 'omx_root', cwd: 'rooted', team_created_at: team.created_at, steps, env: { OMX_ROOT: 'box' } });
}

const relativize = (value) => JSON.parse(JSON.stringify(value).split(base).join('<base>'));
process.stdout.write(`${JSON.stringify(relativize({
  omx_version: '0.20.3',
  runtime_bridge: 'disabled (OMX_RUNTIME_BRIDGE=0)',
  team: TEAM,
  worker: WORKER,
  scenarios,
}), null, 2)}\n`);
fs.rmSync(base, { recursive: true, force: true });
