// The JetBrains HTTP Client script API (`client`, `request`, `response`) over the data
// Volley hands in. A module, compiled once per process to bytecode and loaded into each
// script's context: its `install` puts the globals in place and returns `finish`, which
// runs the registered tests and answers what the script did as JSON, and `isExit`,
// which tells `client.exit()` from an error.
// Nothing here reaches outside the context: scripts get no file system, network,
// process or timers.
export function install(inputJson, responseBody) {
  "use strict";
  const input = JSON.parse(inputJson);
  const own = (map, key) => map != null && Object.prototype.hasOwnProperty.call(map, key);
  const EXIT = Object.freeze({ volleyExit: true });
  const changes = Object.create(null);
  const requestVariables = Object.create(null);
  let clearedAll = false;
  const tests = [];
  const logs = [];

  // Where the innermost frame of the script is: 1-based line and column.
  function place() {
    const match = /[( ]volley-script:(\d+):(\d+)/.exec(new Error().stack || "");
    return match ? [Number(match[1]), Number(match[2])] : null;
  }
  function text(value) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return String(value);
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch (error) {
      return String(value);
    }
  }
  function messageOf(error) {
    if (error instanceof Error) return error.name && error.name !== "Error" ? error.name + ": " + error.message : error.message;
    return text(error);
  }
  class AssertionError extends Error {}
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
        const wanted = String(name).toLowerCase();
        const found = pairs.find((pair) => pair[0].toLowerCase() === wanted);
        return found ? found[1] : null;
      },
      valuesOf(name) {
        const wanted = String(name).toLowerCase();
        return pairs.filter((pair) => pair[0].toLowerCase() === wanted).map((pair) => pair[1]);
      },
    };
  }

  const client = Object.freeze({
    global: Object.freeze({
      set(name, value) {
        changes[String(name)] = { value: value === undefined ? null : value };
      },
      get(name) {
        return globalValue(String(name));
      },
      isEmpty() {
        const names = new Set(clearedAll ? [] : Object.keys(input.globals));
        for (const name of Object.keys(changes)) {
          if (changes[name].cleared) names.delete(name);
          else names.add(name);
        }
        return names.size === 0;
      },
      clear(name) {
        changes[String(name)] = { cleared: true };
      },
      clearAll() {
        clearedAll = true;
        for (const name of Object.keys(changes)) delete changes[name];
      },
    }),
    test(name, body) {
      if (typeof body !== "function") throw new TypeError("client.test(name, fn): fn must be a function");
      tests.push({ name: String(name), body, place: place() });
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
  const request = Object.freeze({
    method: sent.method,
    url: Object.freeze({
      getRaw: () => sent.url,
      tryGetSubstituted: () => (sent.sentUrl != null ? sent.sentUrl : substitute(sent.url)),
    }),
    headers: Object.freeze({
      all: () => sent.headers.map(header),
      findByName(name) {
        const wanted = String(name).toLowerCase();
        const found = sent.headers.find((pair) => pair[0].toLowerCase() === wanted);
        return found ? header(found) : null;
      },
    }),
    body: Object.freeze({
      getRaw: () => (sent.body == null ? undefined : sent.body),
      tryGetSubstituted: () => (sent.sentBody != null ? sent.sentBody : sent.body == null ? undefined : substitute(sent.body)),
    }),
    environment: Object.freeze({
      get: (name) => (own(input.environment, String(name)) ? input.environment[String(name)] : null),
    }),
    variables: Object.freeze({
      set(name, value) {
        requestVariables[String(name)] = value === undefined ? null : value;
      },
      get(name) {
        const value = known(String(name));
        return value === undefined ? null : value;
      },
    }),
  });
  function header(pair) {
    return Object.freeze({
      name: pair[0],
      getRawValue: () => pair[1],
      tryGetSubstitutedValue: () => (pair.length > 2 ? pair[2] : substitute(pair[1])),
    });
  }

  globalThis.client = client;
  globalThis.request = request;
  // Scripts written for Node-based runners log with `console`: the same lines as `client.log`.
  const log = (...values) => client.log(...values);
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
  if (input.response) {
    const answered = input.response;
    let parsed;
    let read = false;
    const json = /^application\/([\w.+-]*\+)?json$/i.test(answered.mimeType || "") || /\+json$/i.test(answered.mimeType || "");
    globalThis.response = Object.freeze({
      status: answered.status,
      get body() {
        if (!read) {
          read = true;
          parsed = responseBody;
          if (json && responseBody !== "") {
            try {
              parsed = JSON.parse(responseBody);
            } catch (error) {
              parsed = responseBody;
            }
          }
        }
        return parsed;
      },
      headers: Object.freeze(headerLookup(answered.headers)),
      contentType: Object.freeze({ mimeType: answered.mimeType, charset: answered.charset }),
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
    const globals = Object.keys(changes).map((name) => [name, changes[name].cleared ? null : changes[name].value, !!changes[name].cleared]);
    return JSON.stringify({ globals, clearAll: clearedAll, variables: requestVariables, tests: results, logs });
  }
  return Object.freeze({ finish, isExit: (value) => value === EXIT });
}
