// @ts-check
/** What `panefleet decide` does with one stdin text (docs/ports.md, "panefleet decide"). */
import { canonical, isObject, parseStrict, quoteName } from './json.mjs';
import { decode, firstProblem, ref, SCHEMA } from './schema.mjs';
import { decide } from './program.mjs';
import { teardownProgram } from './tmux.mjs';

/** The operations this port answers: name -> its program (request and decision from the schema). */
export const PROGRAMS = /** @type {{[name: string]: (req: any) => Generator<any, any, any>}} */ ({
  'tmux.teardown': teardownProgram,
});

/** @typedef {{exit_code: number, stdout: string, stderr: string}} Answer */

/** @param {string} message @returns {Answer} */
const usage = (message) => ({ exit_code: 2, stdout: '', stderr: `panefleet decide: ${message}\n` });

/** @param {string} stdin @returns {Answer} */
export function answer(stdin) {
  /** @type {any} */
  let body;
  try {
    body = parseStrict(stdin);
  } catch {
    body = undefined;
  }
  if (!isObject(body)) return usage('stdin must be a JSON object {operation, request, journal}');
  const name = body.operation;
  const program = typeof name === 'string' && Object.hasOwn(PROGRAMS, name) ? PROGRAMS[name] : undefined;
  if (program === undefined) {
    return usage(`unknown operation ${quoteName(name)} (known: ${Object.keys(PROGRAMS).sort().join(', ')})`);
  }
  const requestDef = SCHEMA.operations[name].request;
  const journal = Object.hasOwn(body, 'journal') ? body.journal : [];
  if (!Array.isArray(journal)) return usage('journal must be a JSON array of entries');
  const entries = [];
  for (let i = 0; i < journal.length; i++) {
    const problem = firstProblem(journal[i], ref('Entry'));
    if (problem) return usage(`journal[${i}] is invalid: ${problem[0]}: ${problem[1]}`);
    entries.push(decode(journal[i], ref('Entry')));
  }
  const problem = firstProblem(body.request ?? null, ref(requestDef));
  if (problem) return usage(`request does not fit ${requestDef}: ${problem[0]}: ${problem[1]}`);
  const request = decode(body.request, ref(requestDef));
  return { exit_code: 0, stdout: canonical(decide(() => program(request), entries)) + '\n', stderr: '' };
}
