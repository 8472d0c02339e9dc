// @ts-check
/**
 * decide(program, journal): replay the journal into a fresh program (docs/ports.md, "Replay and
 * error decisions"): Next(step) for the first step the journal does not cover, else the Done.
 */
import { deepEqual, compareCodePoints } from './json.mjs';
import { Mismatch } from './tmux.mjs';

/** @param {any} problem @param {any[]} changes @param {string} [message] */
function errorDone(problem, changes = [], message = problem.code) {
  /** @type {{[k: string]: any}} */
  const result = { ok: false, error: message, problem };
  if (changes.length) result.changesMade = changes;
  return { kind: 'done', outcome: { status: 'error', result, message }, debt: [] };
}

/** The first differing field of two steps: `op` when the ops differ. @param {any} want @param {any} got */
function differingField(want, got) {
  if (want.op !== got.op) return 'op';
  return Object.keys(want).sort(compareCodePoints).find((k) => !deepEqual(want[k], got[k])) ?? 'op';
}

/** The fields of a step left out while they are null (pure/model.py `OMIT_NONE`). */
const OMITTED_WHEN_NULL = ['effect', 'host'];

/**
 * A step as it is written: an `effect` of null (the decoder's default) is no effect, and a `host` of
 * null is this machine; both are left out (docs/ports.md, "Effects"). @param {any} step
 */
export function written(step) {
  return Object.fromEntries(Object.entries(step).filter(([key, value]) => !(OMITTED_WHEN_NULL.includes(key)
    && (value === null || value === undefined))));
}

/** Whether a step changes the world (teardown's only ones are mutating runs). @param {any} step */
const isMutation = (step) => step.op === 'run' ? step.mutates === true
  : ['write_file', 'append_file', 'remove', 'mkdir'].includes(step.op)
    || (step.op === 'store' && !/^(get|list|read|load)/.test(step.action));

/**
 * @param {() => Generator<any, any, any>} factory @param {{step: any, observation: any}[]} journal
 * @returns {any} the decision
 */
export function decide(factory, journal) {
  const gen = factory();
  /** @type {any} */
  let pending = null;
  /** @type {any} */
  let done = null;
  let settled = false;
  /** @type {any[]} */
  const changes = [];
  /** @param {() => IteratorResult<any, any>} advance @param {number} at */
  const guard = (advance, at) => {
    try {
      const next = advance();
      if (next.done) done = next.value; else pending = next.value;
    } catch (err) {
      if (err instanceof Mismatch) {
        const e = /** @type {any} */ (err);
        done = errorDone({ code: 'journal_mismatch', at, op: e.op, expected_kind: e.expected, got_kind: e.got }, changes);
        settled = true;
      } else {
        const e = /** @type {Error} */ (err);
        done = errorDone({ code: 'internal_error' }, changes, `internal_error:${e.name}:${e.message}`);
      }
    }
  };
  guard(() => gen.next(), -1);
  journal.forEach(({ step: read, observation }, at) => {
    const step = written(read);
    if (done !== null) {
      if (!settled) { done = errorDone({ code: 'journal_after_done', at, got_op: step.op }); settled = true; }
      return;
    }
    if (!deepEqual(step, pending)) {
      done = errorDone({ code: 'journal_divergence', at, expected_op: pending.op, got_op: step.op,
        field: differingField(pending, step) });
      settled = true;
      return;
    }
    if (isMutation(step)) changes.push(step);
    pending = null;
    guard(() => gen.next(observation), at);
  });
  return done ?? { kind: 'next', steps: [pending] };
}
