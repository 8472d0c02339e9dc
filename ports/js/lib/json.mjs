// @ts-check
/** JSON as the contract reads it (docs/ports.md, "JSON"): strict input, canonical output. */

export const MAX_DEPTH = 100;

/**
 * @typedef {{[key: string]: Json}} JsonObject
 * @typedef {Array<Json>} JsonArray
 * @typedef {null | boolean | number | string | JsonArray | JsonObject} Json
 */

/**
 * Compare two strings by Unicode code points (not UTF-16 code units).
 * @param {string} a @param {string} b @returns {number}
 */
export function compareCodePoints(a, b) {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = /** @type {number} */ (x[i].codePointAt(0)) - /** @type {number} */ (y[i].codePointAt(0));
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** @param {unknown} v @returns {v is {[key: string]: any}} */
export function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parse strict JSON: no NaN/Infinity (JSON.parse already refuses them), no number beyond the range of
 * a double, at most MAX_DEPTH levels of nesting. Throws on anything else.
 * @param {string} text @returns {Json}
 */
export function parseStrict(text) {
  const value = JSON.parse(text);
  /** @type {[any, number][]} */
  const stack = [[value, 1]];
  while (stack.length) {
    const [item, level] = /** @type {[any, number]} */ (stack.pop());
    if (typeof item === 'number' && !Number.isFinite(item)) throw new Error('number out of range');
    if (typeof item === 'object' && item !== null) {
      if (level > MAX_DEPTH) throw new Error('nested too deeply');
      for (const child of Object.values(item)) stack.push([child, level + 1]);
    }
  }
  return value;
}

/**
 * Canonical JSON: keys sorted by code point, two-space indent (pretty) or no spaces, non-ASCII kept.
 * @param {Json} value @param {boolean} [pretty] @param {string} [indent] @returns {string}
 */
export function canonical(value, pretty = true, indent = '') {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const inner = indent + '  ';
  const open = pretty ? '\n' + inner : '', close = pretty ? '\n' + indent : '', sep = pretty ? ',\n' + inner : ',';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return '[' + open + value.map((v) => canonical(v, pretty, inner)).join(sep) + close + ']';
  }
  const keys = Object.keys(value).sort(compareCodePoints);
  if (keys.length === 0) return '{}';
  const items = keys.map((k) => JSON.stringify(k) + (pretty ? ': ' : ':') + canonical(value[k], pretty, inner));
  return '{' + open + items.join(sep) + close + '}';
}

/** JSON strings with every character outside U+0020-U+007E escaped (lowercase hex). @param {string} s */
export function asciiJson(s) {
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Structural equality of JSON values (same keys, same order of array items). @param {any} a @param {any} b @returns {boolean} */
export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

const NOT_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/**
 * How `panefleet decide` quotes an unknown operation name (cli.py formats it with Python's repr):
 * a string in single quotes (double quotes when it holds ' and no "), \\ \t \n \r and the quote
 * escaped, other non-printable characters as \xNN, \uNNNN or \UNNNNNNNN; null None; booleans
 * True/False; arrays and objects item by item. A number is written as JSON writes it.
 * @param {unknown} value @returns {string}
 */
export function quoteName(value) {
  if (value === undefined || value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return JSON.stringify(value);
  if (Array.isArray(value)) return '[' + value.map(quoteName).join(', ') + ']';
  if (isObject(value)) return '{' + Object.entries(value).map(([k, v]) => quoteName(k) + ': ' + quoteName(v)).join(', ') + '}';
  const s = String(value);
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const cp = /** @type {number} */ (ch.codePointAt(0));
    if (ch === quote || ch === '\\') out += '\\' + ch;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp < 0x7f || !NOT_PRINTABLE.test(ch)) out += ch;
    else if (cp <= 0xff) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + quote;
}
