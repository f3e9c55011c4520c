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
    for (const name of keysOf(input.variables)) {
      if (/^[A-Za-z_$][\w$]*$/.test(name) && !(name in globalThis)) globalThis[name] = input.variables[name];
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
    globalThis.require = (name) => {
      if (name === "assert" || name === "node:assert" || name === "assert/strict" || name === "node:assert/strict") return assert;
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
