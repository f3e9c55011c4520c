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

  function finish() {
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
    return toJson({ globals, clearAll: clearedAll, variables: requestVariables, tests: results, logs });
  }
  return freeze({ finish, isExit: (value) => value === EXIT });
}
