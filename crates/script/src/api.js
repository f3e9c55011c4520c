// The JetBrains HTTP Client script API (`client`, `request`, `response`) over the data
// Volley hands in. A module, compiled once per process to bytecode and loaded once into
// each realm: `baseline` records the global object as the realm made it; before each
// script `install` puts the globals in place and returns `finish`, which runs the
// registered tests and answers what the script did as JSON, and `isExit`, which tells
// `client.exit()` from an error; after it `restore` puts the global object back.
// Nothing here reaches outside the realm: scripts get no file system, network,
// process or timers.
// The built-ins the API uses, taken when the module is evaluated (before any script),
// so that what a script replaces changes neither the API's answers nor how the global
// object is put back.
const { ownKeys, deleteProperty, defineProperty, getPrototypeOf, apply } = Reflect;
const { getOwnPropertyDescriptor, isExtensible, freeze, create, keys: keysOf } = Object;
const { hasOwnProperty } = Object.prototype;
const { parse: parseJson, stringify: toJson } = JSON;
const [toText, toNumber, ErrorType, TypeErrorType, SetType] = [String, Number, Error, TypeError, Set];
const GLOBAL_PROTOTYPE = getPrototypeOf(globalThis);
let pristine = null;

// Records the global object's own properties as the realm made them.
export function baseline() {
  const keys = ownKeys(globalThis);
  pristine = { keys, descriptors: [], index: create(null) };
  for (let i = 0; i < keys.length; i++) {
    pristine.descriptors[i] = getOwnPropertyDescriptor(globalThis, keys[i]);
    pristine.index[keys[i]] = true;
  }
}

// Puts the global object back as `baseline` found it: what the API and the script
// added removed, what the script replaced put back. `false` when that cannot be done.
export function restore() {
  try {
    const keys = ownKeys(globalThis);
    for (let i = 0; i < keys.length; i++) {
      if (pristine.index[keys[i]] !== true && !deleteProperty(globalThis, keys[i])) return false;
    }
    for (let i = 0; i < pristine.keys.length; i++) {
      if (globalThis[pristine.keys[i]] === pristine.descriptors[i].value) continue;
      if (!defineProperty(globalThis, pristine.keys[i], pristine.descriptors[i])) return false;
    }
    return getPrototypeOf(globalThis) === GLOBAL_PROTOTYPE && isExtensible(globalThis);
  } catch (error) {
    return false;
  }
}

// A small `Buffer` (Node's) for httpyac scripts: made from text (UTF-8), base64, hex or
// bytes, written back as UTF-8, base64, base64url, hex or latin1.
function makeBuffer() {
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const utf8 = (text) => {
    const bytes = [];
    for (const character of String(text)) {
      let code = character.codePointAt(0);
      if (code < 0x80) bytes.push(code);
      else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
      else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
      else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
    }
    return bytes;
  };
  const fromUtf8 = (bytes) => {
    let out = "";
    for (let i = 0; i < bytes.length; ) {
      const b = bytes[i];
      let code;
      if (b < 0x80) { code = b; i += 1; }
      else if (b < 0xe0) { code = ((b & 31) << 6) | (bytes[i + 1] & 63); i += 2; }
      else if (b < 0xf0) { code = ((b & 15) << 12) | ((bytes[i + 1] & 63) << 6) | (bytes[i + 2] & 63); i += 3; }
      else { code = ((b & 7) << 18) | ((bytes[i + 1] & 63) << 12) | ((bytes[i + 2] & 63) << 6) | (bytes[i + 3] & 63); i += 4; }
      out += String.fromCodePoint(code);
    }
    return out;
  };
  const toBase64 = (bytes) => {
    let out = "";
    for (let i = 0; i < bytes.length; i += 3) {
      const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
      out += i + 1 < bytes.length ? B64[(n >> 6) & 63] : "=";
      out += i + 2 < bytes.length ? B64[n & 63] : "=";
    }
    return out;
  };
  const fromBase64 = (text) => {
    const clean = String(text).replace(/-/g, "+").replace(/_/g, "/").replace(/[^A-Za-z0-9+/]/g, "");
    const bytes = [];
    for (let i = 0; i < clean.length; i += 4) {
      const n = (B64.indexOf(clean[i]) << 18) | (B64.indexOf(clean[i + 1]) << 12) | ((B64.indexOf(clean[i + 2]) & 63) << 6) | (B64.indexOf(clean[i + 3]) & 63);
      bytes.push((n >> 16) & 255);
      if (i + 2 < clean.length) bytes.push((n >> 8) & 255);
      if (i + 3 < clean.length) bytes.push(n & 255);
    }
    return bytes;
  };
  class Buffer {
    constructor(bytes) {
      this.bytes = bytes;
      this.length = bytes.length;
    }
    static from(value, encoding) {
      if (value instanceof Buffer) return new Buffer(value.bytes.slice());
      if (Array.isArray(value)) return new Buffer(value.map((byte) => byte & 255));
      if (encoding === "base64" || encoding === "base64url") return new Buffer(fromBase64(value));
      if (encoding === "hex") return new Buffer((String(value).match(/../g) || []).map((pair) => parseInt(pair, 16)));
      if (encoding === "latin1" || encoding === "binary" || encoding === "ascii") return new Buffer(Array.from(String(value), (c) => c.charCodeAt(0) & 255));
      return new Buffer(utf8(value));
    }
    static isBuffer(value) {
      return value instanceof Buffer;
    }
    static byteLength(value) {
      return utf8(value).length;
    }
    toString(encoding) {
      if (encoding === "base64") return toBase64(this.bytes);
      if (encoding === "base64url") return toBase64(this.bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      if (encoding === "hex") return this.bytes.map((byte) => byte.toString(16).padStart(2, "0")).join("");
      if (encoding === "latin1" || encoding === "binary" || encoding === "ascii") return String.fromCharCode(...this.bytes);
      return fromUtf8(this.bytes);
    }
    toJSON() {
      return { type: "Buffer", data: this.bytes.slice() };
    }
  }
  return Buffer;
}

// Node's `crypto` as httpyac's scripts use it: HMAC and hashes with SHA-256 (digests as
// hex, base64, base64url or a Buffer), random bytes and UUIDs from the 32 random bytes
// Volley hands each script (stretched with SHA-256 when more are asked for).
function makeCrypto(Buffer, entropyHex) {
  const K = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ];
  const sha256 = (bytes) => {
    const h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    const length = bytes.length;
    const padded = bytes.slice();
    padded.push(0x80);
    while (padded.length % 64 !== 56) padded.push(0);
    const bits = length * 8;
    for (let i = 7; i >= 0; i--) padded.push(i >= 4 ? 0 : (bits >>> (i * 8)) & 255);
    const w = new Array(64);
    for (let chunk = 0; chunk < padded.length; chunk += 64) {
      for (let i = 0; i < 16; i++) {
        const at = chunk + i * 4;
        w[i] = (padded[at] << 24) | (padded[at + 1] << 16) | (padded[at + 2] << 8) | padded[at + 3];
      }
      for (let i = 16; i < 64; i++) {
        const s0 = ((w[i - 15] >>> 7) | (w[i - 15] << 25)) ^ ((w[i - 15] >>> 18) | (w[i - 15] << 14)) ^ (w[i - 15] >>> 3);
        const s1 = ((w[i - 2] >>> 17) | (w[i - 2] << 15)) ^ ((w[i - 2] >>> 19) | (w[i - 2] << 13)) ^ (w[i - 2] >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
      let [a, b, c, d, e, f, g, hh] = h;
      for (let i = 0; i < 64; i++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const ch = (e & f) ^ (~e & g);
        const t1 = (hh + S1 + ch + K[i] + w[i]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const maj = (a & b) ^ (a & c) ^ (b & c);
        const t2 = (S0 + maj) | 0;
        hh = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0; h[1] = (h[1] + b) | 0; h[2] = (h[2] + c) | 0; h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0; h[5] = (h[5] + f) | 0; h[6] = (h[6] + g) | 0; h[7] = (h[7] + hh) | 0;
    }
    const out = [];
    for (const word of h) out.push((word >>> 24) & 255, (word >>> 16) & 255, (word >>> 8) & 255, word & 255);
    return out;
  };
  const bytesOf = (value) => (value instanceof Buffer ? value.bytes.slice() : Buffer.from(value).bytes);
  const only = (algorithm) => {
    if (String(algorithm).toLowerCase().replace("-", "") !== "sha256") {
      throw new Error("crypto: only sha256 is available in Volley's sandbox, not " + algorithm);
    }
  };
  const digestOf = (bytes, encoding) => (encoding ? Buffer.from(bytes).toString(encoding) : Buffer.from(bytes));
  const createHash = (algorithm) => {
    only(algorithm);
    let data = [];
    const hash = {
      update(value) { data = data.concat(bytesOf(value)); return hash; },
      digest(encoding) { return digestOf(sha256(data), encoding); },
    };
    return hash;
  };
  const createHmac = (algorithm, key) => {
    only(algorithm);
    let keyBytes = bytesOf(key);
    if (keyBytes.length > 64) keyBytes = sha256(keyBytes);
    while (keyBytes.length < 64) keyBytes.push(0);
    let data = [];
    const hmac = {
      update(value) { data = data.concat(bytesOf(value)); return hmac; },
      digest(encoding) {
        const inner = sha256(keyBytes.map((byte) => byte ^ 0x36).concat(data));
        return digestOf(sha256(keyBytes.map((byte) => byte ^ 0x5c).concat(inner)), encoding);
      },
    };
    return hmac;
  };
  let pool = Buffer.from(entropyHex || "", "hex").bytes;
  let counter = 0;
  const randomBytes = (count) => {
    const out = [];
    while (out.length < count) {
      if (pool.length === 0) {
        counter += 1;
        pool = sha256(Buffer.from(entropyHex + ":" + counter).bytes);
      }
      out.push(pool.shift());
    }
    return Buffer.from(out);
  };
  const randomUUID = () => {
    const b = randomBytes(16).bytes;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = Buffer.from(b).toString("hex");
    return hex.slice(0, 8) + "-" + hex.slice(8, 12) + "-" + hex.slice(12, 16) + "-" + hex.slice(16, 20) + "-" + hex.slice(20);
  };
  return { createHash, createHmac, randomBytes, randomUUID };
}

export function install(inputJson, responseBody) {
  "use strict";
  const input = parseJson(inputJson);
  const own = (map, key) => map != null && apply(hasOwnProperty, map, [key]);
  const EXIT = freeze({ volleyExit: true });
  const changes = create(null);
  const requestVariables = create(null);
  let clearedAll = false;
  const tests = [];
  const logs = [];

  // Where the innermost frame of the script is: 1-based line and column.
  function place() {
    // The script runs as the body of a function that starts one line before it.
    const match = /[( ]volley-script:(\d+):(\d+)/.exec(new ErrorType().stack || "");
    return match ? [toNumber(match[1]) - 1, toNumber(match[2])] : null;
  }
  function text(value) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return toText(value);
    try {
      const json = toJson(value);
      return json === undefined ? toText(value) : json;
    } catch (error) {
      return toText(value);
    }
  }
  function messageOf(error) {
    if (error instanceof ErrorType) return error.name && error.name !== "Error" ? error.name + ": " + error.message : error.message;
    return text(error);
  }
  class AssertionError extends ErrorType {}
  AssertionError.prototype.name = "AssertionError";

  function globalValue(name) {
    if (own(changes, name)) return changes[name].cleared ? null : changes[name].value;
    if (clearedAll || !own(input.globals, name)) return null;
    return input.globals[name];
  }
  // What `{{name}}` stands for in `tryGetSubstituted`: request variables first, then the
  // variables known before the script ran.
  function known(name) {
    if (own(requestVariables, name)) return requestVariables[name];
    if (own(changes, name)) return changes[name].cleared ? undefined : changes[name].value;
    if (own(input.variables, name)) return input.variables[name];
    return undefined;
  }
  function substitute(template) {
    if (typeof template !== "string") return template;
    return template.replace(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g, (whole, name) => {
      const value = known(name);
      return value === undefined || value === null ? whole : typeof value === "string" ? value : text(value);
    });
  }
  function headerLookup(pairs) {
    return {
      valueOf(name) {
        const wanted = toText(name).toLowerCase();
        const found = pairs.find((pair) => pair[0].toLowerCase() === wanted);
        return found ? found[1] : null;
      },
      valuesOf(name) {
        const wanted = toText(name).toLowerCase();
        return pairs.filter((pair) => pair[0].toLowerCase() === wanted).map((pair) => pair[1]);
      },
    };
  }

  const client = freeze({
    global: freeze({
      set(name, value) {
        changes[toText(name)] = { value: value === undefined ? null : value };
      },
      get(name) {
        return globalValue(toText(name));
      },
      isEmpty() {
        const names = new SetType(clearedAll ? [] : keysOf(input.globals));
        for (const name of keysOf(changes)) {
          if (changes[name].cleared) names.delete(name);
          else names.add(name);
        }
        return names.size === 0;
      },
      clear(name) {
        changes[toText(name)] = { cleared: true };
      },
      clearAll() {
        clearedAll = true;
        for (const name of keysOf(changes)) delete changes[name];
      },
    }),
    test(name, body) {
      if (typeof body !== "function") throw new TypeErrorType("client.test(name, fn): fn must be a function");
      tests.push({ name: toText(name), body, place: place() });
    },
    assert(condition, message) {
      if (!condition) throw new AssertionError(message === undefined ? "Assertion failed" : text(message));
    },
    log(...values) {
      logs.push(values.map(text).join(" "));
    },
    exit() {
      throw EXIT;
    },
  });

  const sent = input.request;
  const request = freeze({
    method: sent.method,
    url: freeze({
      getRaw: () => sent.url,
      tryGetSubstituted: () => (sent.sentUrl != null ? sent.sentUrl : substitute(sent.url)),
    }),
    headers: freeze({
      all: () => sent.headers.map(header),
      findByName(name) {
        const wanted = toText(name).toLowerCase();
        const found = sent.headers.find((pair) => pair[0].toLowerCase() === wanted);
        return found ? header(found) : null;
      },
    }),
    body: freeze({
      getRaw: () => (sent.body == null ? undefined : sent.body),
      tryGetSubstituted: () => (sent.sentBody != null ? sent.sentBody : sent.body == null ? undefined : substitute(sent.body)),
    }),
    environment: freeze({
      get: (name) => (own(input.environment, toText(name)) ? input.environment[toText(name)] : null),
    }),
    variables: freeze({
      set(name, value) {
        requestVariables[toText(name)] = value === undefined ? null : value;
      },
      get(name) {
        const value = known(toText(name));
        return value === undefined ? null : value;
      },
    }),
  });
  function header(pair) {
    return freeze({
      name: pair[0],
      getRawValue: () => pair[1],
      tryGetSubstitutedValue: () => (pair.length > 2 ? pair[2] : substitute(pair[1])),
    });
  }

  globalThis.client = client;
  globalThis.request = request;
  // Scripts written for Node-based runners log with `console`: the same lines as `client.log`.
  const log = (...values) => client.log(...values);
  globalThis.console = freeze({ log, info: log, warn: log, error: log, debug: log });
  if (input.response) {
    const answered = input.response;
    let parsed;
    let read = false;
    const json = /^application\/([\w.+-]*\+)?json$/i.test(answered.mimeType || "") || /\+json$/i.test(answered.mimeType || "");
    globalThis.response = freeze({
      status: answered.status,
      get body() {
        if (!read) {
          read = true;
          parsed = responseBody;
          if (json && responseBody !== "") {
            try {
              parsed = parseJson(responseBody);
            } catch (error) {
              parsed = responseBody;
            }
          }
        }
        return parsed;
      },
      headers: freeze(headerLookup(answered.headers)),
      contentType: freeze({ mimeType: answered.mimeType, charset: answered.charset }),
    });
  }

  // httpyac's script API over the same data: the variables as JavaScript variables,
  // `exports` (stored as variables once the script ends), `$global`, `test` with its
  // helpers, `sleep` (the send waits that long), `request` and `response` in httpyac's
  // shape, and `require` of `assert` only.
  let httpyac = null;
  if (input.httpyac) {
    const exportsObject = {};
    const previous = own(input.globals, "$global") && input.globals["$global"] !== null && typeof input.globals["$global"] === "object" ? input.globals["$global"] : {};
    const globalObject = parseJson(toJson(previous));
    httpyac = { exports: exportsObject, global: globalObject, slept: 0 };
    // The variables, and what scripts exported before (the client's globals) under them.
    for (const source of [input.variables, input.globals || {}]) {
      for (const name of keysOf(source)) {
        if (/^[A-Za-z_$][\w$]*$/.test(name) && !(name in globalThis)) globalThis[name] = source[name];
      }
    }
    const testFunction = (name, body) => client.test(name, body);
    const expect = (condition, message) => {
      if (!condition) throw new AssertionError(message);
    };
    const answered = input.response;
    const lowerHeaders = create(null);
    if (answered) {
      for (const [name, value] of answered.headers) {
        const key = toText(name).toLowerCase();
        lowerHeaders[key] = own(lowerHeaders, key) ? lowerHeaders[key] + ", " + value : value;
      }
    }
    testFunction.status = (code) => testFunction("response status is " + code, () => expect(answered && answered.status === code, "expected status " + code + ", got " + (answered && answered.status)));
    testFunction.header = (name, value) => testFunction("response header " + name + " equals " + value, () => expect(lowerHeaders[toText(name).toLowerCase()] === value, "expected " + name + ": " + value + ", got " + lowerHeaders[toText(name).toLowerCase()]));
    testFunction.headerContains = (name, value) => testFunction("response header " + name + " contains " + value, () => expect(toText(lowerHeaders[toText(name).toLowerCase()] || "").indexOf(value) >= 0, "expected " + name + " to contain " + value));
    testFunction.totalTime = (limit) => testFunction("response time is below " + limit + " ms", () => expect(!answered || answered.totalMs === undefined || answered.totalMs < limit, "the response took " + (answered && answered.totalMs) + " ms"));
    testFunction.hasResponseBody = () => testFunction("response has a body", () => expect(responseBody !== "", "the response has no body"));
    testFunction.hasNoResponseBody = () => testFunction("response has no body", () => expect(responseBody === "", "the response has a body"));
    testFunction.responseBody = (body) => testFunction("response body equals", () => expect(responseBody === body, "the body differs"));
    globalThis.test = testFunction;
    // The value of an httpyac `{{ expression }}`.
    globalThis.__volleyValue = (value) => {
      requestVariables.value = value === undefined ? null : value;
    };
    globalThis.exports = exportsObject;
    // Node's globals scripts reach for: the file's place, and `Buffer` for base64 and hex.
    globalThis.__filename = input.file || "";
    globalThis.__dirname = (input.file || "").replace(/[\\/][^\\/]*$/, "");
    globalThis.Buffer = makeBuffer();
    if (typeof globalThis.btoa !== "function") globalThis.btoa = (text) => globalThis.Buffer.from(text, "latin1").toString("base64");
    if (typeof globalThis.atob !== "function") globalThis.atob = (text) => globalThis.Buffer.from(text, "base64").toString("latin1");
    globalThis.$global = globalObject;
    globalThis.sleep = (milliseconds) => {
      httpyac.slept += toNumber(milliseconds) || 0;
      return Promise.resolve();
    };
    const deepEqual = (a, b) => {
      if (a === b) return true;
      if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return a == b;
      const left = keysOf(a);
      const right = keysOf(b);
      return left.length === right.length && left.every((key) => apply(hasOwnProperty, b, [key]) && deepEqual(a[key], b[key]));
    };
    const strictDeepEqual = (a, b) => {
      if (a === b) return true;
      if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
      const left = keysOf(a);
      const right = keysOf(b);
      return left.length === right.length && left.every((key) => apply(hasOwnProperty, b, [key]) && strictDeepEqual(a[key], b[key]));
    };
    const fail = (message, fallback) => {
      throw new AssertionError(message === undefined ? fallback : text(message));
    };
    const assert = (value, message) => value || fail(message, "expected a truthy value, got " + text(value));
    assert.ok = assert;
    assert.equal = (actual, expected, message) => actual == expected || fail(message, "expected " + text(expected) + ", got " + text(actual));
    assert.notEqual = (actual, expected, message) => actual != expected || fail(message, "expected something else than " + text(expected));
    assert.strictEqual = (actual, expected, message) => actual === expected || fail(message, "expected " + text(expected) + ", got " + text(actual));
    assert.notStrictEqual = (actual, expected, message) => actual !== expected || fail(message, "expected something else than " + text(expected));
    assert.deepEqual = (actual, expected, message) => deepEqual(actual, expected) || fail(message, "expected " + text(expected) + ", got " + text(actual));
    assert.deepStrictEqual = (actual, expected, message) => strictDeepEqual(actual, expected) || fail(message, "expected " + text(expected) + ", got " + text(actual));
    assert.match = (actual, pattern, message) => pattern.test(actual) || fail(message, text(actual) + " does not match " + toText(pattern));
    assert.fail = (message) => fail(message, "failed");
    assert.strict = assert;
    const cryptoModule = makeCrypto(globalThis.Buffer, input.entropy);
    globalThis.require = (name) => {
      if (name === "assert" || name === "node:assert" || name === "assert/strict" || name === "node:assert/strict") return assert;
      if (name === "crypto" || name === "node:crypto") return cryptoModule;
      throw new ErrorType("require('" + toText(name) + "') is not available: Volley runs httpyac scripts in its sandbox, without Node");
    };
    const sentHeaders = create(null);
    for (const pair of input.request.headers) sentHeaders[pair[0]] = pair.length > 2 ? pair[2] : substitute(pair[1]);
    globalThis.request = freeze({
      method: input.request.method,
      url: input.request.sentUrl != null ? input.request.sentUrl : substitute(input.request.url),
      headers: freeze(sentHeaders),
      body: input.request.sentBody != null ? input.request.sentBody : input.request.body == null ? undefined : substitute(input.request.body),
    });
    if (answered) {
      const json = /^application\/([\w.+-]*\+)?json$/i.test(answered.mimeType || "") || /\+json$/i.test(answered.mimeType || "");
      let parsedBody;
      if (json && responseBody !== "") {
        try {
          parsedBody = parseJson(responseBody);
        } catch (error) {
          parsedBody = undefined;
        }
      }
      globalThis.response = freeze({
        statusCode: answered.status,
        headers: freeze(lowerHeaders),
        contentType: freeze({ mimeType: answered.mimeType, charset: answered.charset }),
        body: parsedBody === undefined ? responseBody : parsedBody,
        parsedBody,
        prettyPrintBody: parsedBody === undefined ? responseBody : toJson(parsedBody, null, 2),
      });
    }
  }

  function finish() {
    if (httpyac) {
      for (const name of keysOf(httpyac.exports)) {
        const value = httpyac.exports[name];
        if (typeof value !== "function") changes[name] = { value: value === undefined ? null : value };
      }
      changes["$global"] = { value: parseJson(toJson(httpyac.global) || "{}") };
    }
    const results = [];
    for (const test of tests) {
      try {
        test.body();
        results.push({ name: test.name, passed: true, place: test.place });
      } catch (error) {
        if (error === EXIT) {
          results.push({ name: test.name, passed: true, place: test.place });
          break;
        }
        results.push({ name: test.name, passed: false, message: messageOf(error), place: test.place });
      }
    }
    const globals = keysOf(changes).map((name) => [name, changes[name].cleared ? null : changes[name].value, !!changes[name].cleared]);
    return toJson({ globals, clearAll: clearedAll, variables: requestVariables, tests: results, logs, slept: httpyac ? httpyac.slept : 0 });
  }
  return freeze({ finish, isExit: (value) => value === EXIT });
}
