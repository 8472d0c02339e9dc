// @ts-check
/**
 * Pane proofs and the tmux.teardown planner (docs/ports.md, "Pane table", "Owner tag", "Teardown").
 * Programs are generators: they yield a step and receive its observation, like the reference.
 */

export const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 2^53 - 1
// each row names the tmux server that answers: its pid and start time (docs/ports.md, "Pane table")
export const PANE_FORMAT = '#{pane_id}\t#{pane_dead}\t#{pane_pid}\t#{pid}\t#{start_time}';
export const OWNER_OPTION = '@omx_team_pane_owner_id';

// The trimmed set: exactly these code points, removed from both ends (docs/ports.md, "Trimming").
const WHITESPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]);

/** @param {string} text */
export function trim(text) {
  let start = 0, end = text.length;
  while (start < end && WHITESPACE.has(text.charCodeAt(start))) start++;
  while (end > start && WHITESPACE.has(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** One or more ASCII digits. @param {string} text */
const digits = (text) => text.length > 0 && [...text].every((c) => c >= '0' && c <= '9');

/** `%` followed by ASCII digits. @param {unknown} v @returns {v is string} */
export const isPaneId = (v) => typeof v === 'string' && v.length >= 2 && v[0] === '%' && digits(v.slice(1));

/** @param {unknown} v @returns {v is number} */
const isPositivePid = (v) => typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= MAX_SAFE;

/** Why a non-empty pid field is not a pid, or null. @param {string} field */
function pidProblem(field) {
  if (!digits(field)) return 'syntax';
  const significant = field.replace(/^0+/, '');
  return significant === '' || significant.length > 16 || Number(significant) > MAX_SAFE ? 'range' : null;
}

/** @param {number} row @param {number} fields @param {string} field @param {string} rule */
const malformed = (row, fields, field, rule) => ({ code: 'malformed_snapshot', row, field, rule, fields });

/** A pid field as a number. @param {string} field */
const pidOf = (field) => Number(field.replace(/^0+/, ''));

/** A tmux server as `PID@START`, or null when either is not a positive safe integer. @param {string} pid @param {string} start */
export const serverOf = (pid, start) => (pidProblem(pid) || pidProblem(start) ? null : `${pidOf(pid)}@${pidOf(start)}`);

/**
 * The rows of a list-panes answer, or the first problem. Rows have 3 fields, or 5 naming the server
 * (all as many as the first, all the same server).
 * @param {string} stdout
 * @returns {{rows: Map<string, {dead: boolean, pid: number | null, row: number}>, server: string | null} | {problem: object}}
 */
export function parsePaneTable(stdout) {
  const lines = stdout.replaceAll('\r\n', '\n').split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const rows = new Map();
  /** @type {number | null} */
  let width = null;
  /** @type {string | null} */
  let first = null;
  for (let i = 0; i < lines.length; i++) {
    const row = i + 1, fields = lines[i].split('\t');
    width = width || fields.length;
    if (fields.length !== width || (width !== 3 && width !== 5)) {
      return { problem: malformed(row, fields.length, 'row', 'field_count') };
    }
    const [paneId, dead, pidField] = fields;
    if (!isPaneId(paneId)) return { problem: malformed(row, width, 'pane_id', 'syntax') };
    if (rows.has(paneId)) return { problem: malformed(row, width, 'pane_id', 'duplicate') };
    if (dead !== '0' && dead !== '1') return { problem: malformed(row, width, 'pane_dead', 'syntax') };
    const problem = pidField === '' ? null : pidProblem(pidField);
    if (problem) return { problem: malformed(row, width, 'pane_pid', problem) };
    const server = width === 5 ? serverOf(fields[3], fields[4]) : null;
    if (width === 5 && server === null) return { problem: malformed(row, width, 'tmux_server', 'syntax') };
    first = first || server;
    if (server !== first) return { problem: malformed(row, width, 'tmux_server', 'differs') };
    rows.set(paneId, { dead: dead === '1', pid: pidField === '' ? null : pidOf(pidField), row });
  }
  return { rows, server: first };
}

/**
 * @param {string} status @param {string} reason @param {number | null} pid @param {object | null} problem
 * @param {string | null} server
 */
const verdict = (status, reason = '', pid = null, problem = null, server = null) => ({ status, reason, pid, problem, server });

/** @typedef {{kind: 'proc', exit_code: number | null, stdout: string, stderr: string}} Proc */

/** The verdict for `target` given tmux's answer to list-panes. @param {string} target @param {Proc} proc */
export function verdictFromAnswer(target, proc) {
  if (!isPaneId(target)) return verdict('unavailable', 'invalid_pane_id', null, { code: 'invalid_pane_id' });
  if (proc.exit_code !== 0) {
    return verdict('unavailable', 'query_failed', null,
      { code: 'query_failed', exit_code: proc.exit_code, stderr: trim(proc.stderr) });
  }
  const parsed = parsePaneTable(proc.stdout);
  if ('problem' in parsed) return verdict('unavailable', 'malformed_snapshot', null, parsed.problem);
  const row = parsed.rows.get(target), server = parsed.server;
  if (row === undefined) return verdict('gone', 'absent', null, null, server);
  if (row.pid === null) {
    return verdict('unavailable', 'malformed_snapshot', null, malformed(row.row, server ? 5 : 3, 'pane_pid', 'empty'), server);
  }
  return row.dead ? verdict('gone', 'dead', row.pid, null, server) : verdict('live', '', row.pid, null, server);
}

/**
 * The verdict on a pane pinned on tmux server `pinned` (docs/ports.md, "The tmux server"): a listing from
 * another server lists it `absent`; one that names no server cannot prove it.
 * @param {any} v @param {string | null | undefined} pinned
 */
export function onServer(v, pinned) {
  if (pinned == null || v.status === 'unavailable' || v.server === pinned) return v;
  if (v.server === null) {
    if (v.status === 'gone' && v.reason === 'absent') return v;
    return verdict('unavailable', 'malformed_snapshot', null, { code: 'server_replaced', pinned, found: null });
  }
  return verdict('gone', 'absent', null, { code: 'server_replaced', pinned, found: v.server }, v.server);
}

/** Classify a show-option answer. @param {Proc} proc */
export function ownerFromAnswer(proc) {
  const stderr = trim(proc.stderr);
  if (proc.exit_code === 0) {
    const value = trim(proc.stdout);
    return value ? { kind: 'value', value, problem: null } : { kind: 'missing', value: '', problem: null };
  }
  if (proc.exit_code === 1 && stderr === '') return { kind: 'missing', value: '', problem: null };
  return { kind: 'error', value: '', problem: { code: 'query_failed', exit_code: proc.exit_code, stderr } };
}

// ------------------------------------------------------------------------------------------- steps

/** @param {string[]} args @param {boolean} [mutates] */
const tmux = (args, mutates = false) => ({ op: 'run', tool: 'tmux', args, cwd: null, mutates, note: '' });
export const listPanesStep = () => tmux(['list-panes', '-a', '-F', PANE_FORMAT]);

/** The observation fed back does not fit the step. */
export class Mismatch extends Error {
  /** @param {string} op @param {string} expected @param {string} got */
  constructor(op, expected, got) {
    super(`step ${op} expects a ${expected} observation, got ${got}`);
    Object.assign(this, { op, expected, got });
  }
}

/** @param {any} step @param {string} kind @returns {Generator<any, any, any>} */
function* expect(step, kind) {
  const observation = yield step;
  if (observation.kind !== kind) throw new Mismatch(step.op, kind, observation.kind);
  return observation;
}

/** @param {string} pane @returns {Generator<any, any, any>} */
function* prove(pane) {
  if (!isPaneId(pane)) return verdictFromAnswer(pane, { kind: 'proc', exit_code: 0, stdout: '', stderr: '' });
  return verdictFromAnswer(pane, yield* expect(listPanesStep(), 'proc'));
}

/** @param {string} pane @returns {Generator<any, any, any>} */
function* readOwner(pane) {
  if (!trim(pane).startsWith('%')) return { kind: 'error', value: '', problem: { code: 'invalid_pane_id' } };
  return ownerFromAnswer(yield* expect(tmux(['show-option', '-qv', '-p', '-t', pane, OWNER_OPTION]), 'proc'));
}

// ---------------------------------------------------------------------------------------- teardown

/** The bound of the after-kill back-off. @param {number} n */
export const settleMs = (n) => Math.max(100, Math.floor(2000 / Math.max(1, n)));

/** The back-off's pauses: 50, 100, 200 … ms, the last cut so that they add up to the bound. @param {number} bound */
export function backoffMs(bound) {
  const pauses = [];
  for (let left = bound, pause = 50; left > 0; left -= pauses[pauses.length - 1], pause *= 2) {
    pauses.push(Math.min(pause, left));
  }
  return pauses;
}

/**
 * @typedef {{pane_id: string, pid: number | null, server?: string | null}} Target
 * @typedef {{targets: Target[], owner_id: string | null, authorize: boolean, leader_pane_id: string | null,
 *            hud_pane_id: string | null}} TeardownRequest
 */

/** @param {string} pane_id @param {string} fate @param {string} reason @param {string | null} stage @param {any} problem */
const result = (pane_id, fate, reason = '', stage = null, problem = null) => ({ pane_id, fate, reason, stage, problem });

/** @param {string} pane @param {any} v @param {string} stage */
function proofEnds(pane, v, stage) {
  if (v.status === 'gone') return result(pane, 'gone', v.reason, stage, v.problem);
  if (v.status === 'unavailable') return result(pane, 'proof_unavailable', v.reason, stage, v.problem);
  return null;
}

/** @param {string} pane @param {string} stage @param {object} problem */
const refused = (pane, stage, problem) => result(pane, 'pid_changed', 'pane_pid_changed', stage, problem);

/** @param {Target} target @param {TeardownRequest} req @param {number[]} backoff @returns {Generator<any, any, any>} */
function* teardownOne(target, req, backoff) {
  const pane = target.pane_id;
  const first = onServer(yield* prove(pane), target.server);
  const ended = proofEnds(pane, first, 'first_proof');
  if (ended) return ended;
  if (!isPositivePid(target.pid)) {
    return refused(pane, 'first_proof', { code: 'pid_unpinned', pinned_pid: target.pid, found_pid: first.pid });
  }
  if (first.pid !== target.pid) {
    return refused(pane, 'first_proof', { code: 'pid_mismatch', pinned_pid: target.pid, found_pid: first.pid });
  }
  if (req.authorize) {
    const owner = yield* readOwner(pane);
    if (!req.owner_id || owner.kind !== 'value' || owner.value !== req.owner_id) {
      return refused(pane, 'owner', { code: 'owner_not_authorized', expected_owner: req.owner_id, owner });
    }
  }
  // the second listing from the server of the first
  const final = onServer(yield* prove(pane), target.server ?? first.server);
  const finalEnds = proofEnds(pane, final, 'final_proof');
  if (finalEnds) return finalEnds;
  if (final.pid !== target.pid) {
    return refused(pane, 'final_proof', { code: 'pid_mismatch', pinned_pid: target.pid, found_pid: final.pid });
  }
  // the effect the step states (docs/ports.md "Effects"): what a plan shows for this kill
  const tagged = req.authorize && req.owner_id ? `, tagged ${req.owner_id}` : '';
  const effect = { action: 'remove', kind: 'pane', subject: pane, detail: `killed after proof (pid ${final.pid}${tagged})` };
  const kill = yield* expect({ ...tmux(['kill-pane', '-t', pane], true), effect }, 'proc');
  if (kill.exit_code !== 0) {
    return result(pane, 'kill_failed', 'kill_failed', 'kill',
      { code: 'kill_failed', exit_code: kill.exit_code, stderr: trim(kill.stderr) });
  }
  let after = onServer(yield* prove(pane), final.server);
  for (const ms of backoff) {
    if (!(after.status === 'live' && after.pid === target.pid)) break;
    yield* expect({ op: 'sleep', ms }, 'ack');
    after = onServer(yield* prove(pane), final.server);
  }
  if (after.status === 'gone') return result(pane, 'killed', '', 'after_kill');
  if (after.status === 'unavailable') return result(pane, 'proof_unavailable', after.reason, 'after_kill', after.problem);
  return result(pane, 'kill_failed', 'kill_failed', 'after_kill', { code: 'still_live', pid: after.pid });
}

/** The tmux.teardown program. @param {TeardownRequest} req @returns {Generator<any, any, any>} */
export function* teardownProgram(req) {
  const excluded = [], queue = [], seen = new Set();
  for (const target of req.targets) {
    const pane = target.pane_id;
    const rule = pane === req.leader_pane_id ? 'leader' : pane === req.hud_pane_id ? 'hud'
      : !pane.startsWith('%') ? 'not_a_pane_target' : seen.has(pane) ? 'duplicate' : null;
    if (rule) excluded.push({ pane_id: pane, rule });
    else { seen.add(pane); queue.push(target); }
  }
  const backoff = backoffMs(settleMs(queue.length)), results = [];
  let stopped = false;
  for (const target of queue) {
    /** @type {ReturnType<typeof result>} */
    const r = stopped ? result(target.pane_id, 'not_attempted') : yield* teardownOne(target, req, backoff);
    results.push(r);
    stopped = r.fate !== 'killed' && r.fate !== 'gone';
  }
  const unresolved = results.filter((r) => r.fate !== 'killed' && r.fate !== 'gone');
  return {
    kind: 'done',
    outcome: { status: unresolved.length ? 'debt' : 'ok', message: '', result: { ok: !unresolved.length, results, excluded } },
    debt: unresolved.map((r) => ({ kind: 'pane', subject: r.pane_id, reason: r.reason || r.fate, detail: r.problem?.code ?? '' })),
  };
}
