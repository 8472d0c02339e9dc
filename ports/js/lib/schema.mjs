// @ts-check
/**
 * The subset of JSON Schema docs/schema.json uses, read as the contract reads it (docs/ports.md,
 * "Decoding"): `firstProblem` names the first problem of a document in the specified order,
 * `decode` fills in the defaults of a document that has none.
 */
import { readFileSync } from 'node:fs';
import { asciiJson, compareCodePoints, isObject } from './json.mjs';

/** @typedef {{[key: string]: any}} Node */

export const SCHEMA = /** @type {Node} */ (
  JSON.parse(readFileSync(new URL('../../../docs/schema.json', import.meta.url), 'utf8')));

/** @param {Node} node @returns {Node} */
function resolve(node) {
  while (node.$ref !== undefined) node = SCHEMA.$defs[node.$ref.split('/').pop()];
  return node;
}

/** @param {string} name @returns {Node} */
export const ref = (name) => ({ $ref: `#/$defs/${name}` });

/** @param {string} path @param {string} key */
export function pathKey(path, key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${asciiJson(key)}]`;
}

/** @param {unknown} v */
function jsonType(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v; // boolean, number, string
}

const ARTICLE = /** @type {{[t: string]: string}} */ ({ object: 'an object', array: 'an array', string: 'a string',
  integer: 'an integer', number: 'a number', boolean: 'a boolean', null: 'null' });

/** @param {unknown[]} values */
const literals = (values) => values.map((v) => (typeof v === 'string' ? asciiJson(v) : JSON.stringify(v)))
  .sort(compareCodePoints).join(', ');

/** @param {Node} node @returns {string} */
function describe(node) {
  node = resolve(node);
  if ('const' in node) return literals([node.const]);
  if (node.type !== undefined) return ARTICLE[node.type];
  if (node.enum !== undefined) return 'one of ' + literals(node.enum);
  return node.anyOf !== undefined ? 'an object' : 'a JSON value';
}

/** @param {unknown} a @param {unknown} b */
const sameLiteral = (a, b) => jsonType(a) === jsonType(b) && a === b;

/**
 * The first problem of `value` against `node`, as [path, problem], or null.
 * @param {unknown} value @param {Node} node @param {string} [path] @returns {[string, string] | null}
 */
export function firstProblem(value, node, path = '$') {
  node = resolve(node);
  if (node.discriminator !== undefined) {
    const tag = node.discriminator.propertyName;
    /** @type {Map<string, Node>} */
    const members = new Map(node.anyOf.map((/** @type {Node} */ m) => [resolve(m).properties[tag].const, m]));
    if (!isObject(value)) return [path, 'expected an object'];
    const where = pathKey(path, tag);
    if (!Object.hasOwn(value, tag)) return [where, 'missing'];
    const member = typeof value[tag] === 'string' ? members.get(value[tag]) : undefined;
    if (member === undefined) return [where, 'expected one of ' + literals([...members.keys()])];
    return firstProblem(value, member, path);
  }
  if (node.anyOf !== undefined) {
    const found = node.anyOf.map((/** @type {Node} */ option) => firstProblem(value, option, path));
    if (found.some((/** @type {unknown} */ p) => p === null)) return null;
    const kind = jsonType(value);
    for (let i = 0; i < node.anyOf.length; i++) {
      const option = resolve(node.anyOf[i]);
      if (option.type === kind || (option.type === 'integer' && kind === 'number')
          || (option.type === undefined && option.discriminator !== undefined && kind === 'object')) return found[i];
    }
    return [path, 'expected ' + node.anyOf.map(describe).join(' or ')];
  }
  if ('const' in node) return sameLiteral(value, node.const) ? null : [path, `expected ${literals([node.const])}`];
  if (node.enum !== undefined) {
    return node.enum.some((/** @type {unknown} */ v) => sameLiteral(value, v)) ? null
      : [path, 'expected one of ' + literals(node.enum)];
  }
  const wanted = node.type, kind = jsonType(value);
  if (wanted === undefined) return null;
  if (wanted === 'integer') {
    if (typeof value !== 'number' || (Number.isFinite(value) && !Number.isInteger(value))) return [path, 'expected an integer'];
    if (!(value >= (node.minimum ?? -Infinity) && value <= (node.maximum ?? Infinity))) return [path, 'integer out of range'];
    return null;
  }
  if (wanted === 'number') return typeof value === 'number' && Number.isFinite(value) ? null : [path, 'expected a number'];
  if (kind !== wanted) return [path, `expected ${ARTICLE[wanted]}`];
  if (wanted === 'string') return /** @type {string} */ (value).isWellFormed() ? null : [path, 'unpaired surrogate in string'];
  if (wanted === 'array') {
    const items = /** @type {unknown[]} */ (value);
    for (let i = 0; i < items.length; i++) {
      const problem = firstProblem(items[i], node.items ?? {}, `${path}[${i}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (wanted !== 'object') return null;
  const obj = /** @type {Node} */ (value), props = node.properties ?? {}, required = node.required ?? [];
  const extra = node.additionalProperties ?? {};
  const keys = [...new Set([...Object.keys(obj), ...Object.keys(props)])].sort(compareCodePoints);
  for (const key of keys) {
    const where = pathKey(path, key);
    let problem = null;
    if (!Object.hasOwn(props, key)) problem = extra === false ? [where, 'unknown key'] : firstProblem(obj[key], extra, where);
    else if (!Object.hasOwn(obj, key)) problem = required.includes(key) ? [where, 'missing'] : null;
    else problem = firstProblem(obj[key], props[key], where);
    if (problem) return /** @type {[string, string]} */ (problem);
  }
  return null;
}

/**
 * A copy of `value` (which must have no problem) with every omitted property that has a default filled in.
 * @param {any} value @param {Node} node @returns {any}
 */
export function decode(value, node) {
  node = resolve(node);
  if (node.discriminator !== undefined) {
    const tag = node.discriminator.propertyName;
    return decode(value, node.anyOf.find((/** @type {Node} */ m) => resolve(m).properties[tag].const === value[tag]));
  }
  if (node.anyOf !== undefined) return decode(value, node.anyOf.find((/** @type {Node} */ o) => firstProblem(value, o) === null));
  if (Array.isArray(value)) return value.map((item) => decode(item, node.items ?? {}));
  if (!isObject(value) || node.type !== 'object') return value;
  /** @type {Node} */
  const out = {};
  const props = node.properties ?? {};
  for (const [key, item] of Object.entries(value)) out[key] = decode(item, props[key] ?? node.additionalProperties ?? {});
  for (const [key, prop] of Object.entries(props)) {
    if (!Object.hasOwn(out, key) && 'default' in prop) out[key] = structuredClone(prop.default);
  }
  return out;
}

/** Problems of a document against `$defs/name`, as "path: problem" (null when there are none). @param {unknown} value @param {string} name */
export function validate(value, name) {
  const problem = firstProblem(value, ref(name));
  return problem && `${problem[0]}: ${problem[1]}`;
}
