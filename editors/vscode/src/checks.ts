// The pure part of the Testing view: the tree of a file's requests and checks built from
// the language server's `volley.tests` answer (docs/lsp.md), what a send's outcome says
// of each of them (and the run's line of output), the order a run sends requests in, and
// which files discovery looks at. No `vscode` import: `testing.ts` turns these into test items and results.
//
// Invariants: ids are unique within a file and do not depend on the request's index, so
// an item keeps its id (and VS Code its last result) while requests are added above it;
// every assertion of an outcome lands on exactly one check, listed or extra.

import type { Assertion, Outcome } from './outcome';
import { responseStatus } from './status';

/** What `volley.tests {uri}` answers. Lines are 0-based. */
export interface TestsAnswer {
  requests: DiscoveredRequest[];
}

export interface DiscoveredRequest {
  index: number;
  name?: string | null;
  method: string;
  url: string;
  /** The request line. */
  line: number;
  /** The last line of the request's block. */
  endLine: number;
  disabled: boolean;
  checks: DiscoveredCheck[];
}

/** A `# @assert`/`??` line (`assert`), or a `client.test` of an in-place handler (`test`). */
export interface DiscoveredCheck {
  kind: 'assert' | 'test';
  /** The assertion's expression, or the test's name. */
  label: string;
  line: number;
}

/** A request as the Testing view lists it. */
export interface RequestNode {
  id: string;
  /** Its index in the file, what `volley.send` is given. */
  index: number;
  /** Its `# @name`, else `METHOD url`. */
  label: string;
  /** `METHOD url` when the label is the name; `disabled` for a `# @disabled` request. */
  description: string;
  line: number;
  endLine: number;
  disabled: boolean;
  checks: CheckNode[];
}

export interface CheckNode {
  id: string;
  kind: 'assert' | 'test';
  label: string;
  line: number;
}

/** The requests of the file `uri` from a `volley.tests` answer; what is malformed in it is left out. */
export function testTree(uri: string, answer: unknown): RequestNode[] {
  const requests = isObject(answer) && Array.isArray(answer.requests) ? answer.requests : [];
  const requestIds = new Ids();
  const nodes: RequestNode[] = [];
  for (const request of requests) {
    if (!isRequest(request)) {
      continue;
    }
    const name = typeof request.name === 'string' && request.name !== '' ? request.name : undefined;
    const target = `${request.method} ${request.url}`;
    const id = requestIds.take(`${uri}#${name === undefined ? target : `@${name}`}`);
    const checkIds = new Ids();
    const checks: CheckNode[] = [];
    for (const check of Array.isArray(request.checks) ? request.checks : []) {
      if (isCheck(check)) {
        const kind = check.kind;
        checks.push({ id: checkIds.take(`${id}/${kind}:${check.label}`), kind, label: check.label, line: check.line });
      }
    }
    const description = [name === undefined ? '' : target, request.disabled === true ? 'disabled' : '']
      .filter(Boolean)
      .join(' · ');
    nodes.push({
      id,
      index: request.index,
      label: name ?? target,
      description,
      line: request.line,
      endLine: typeof request.endLine === 'number' ? Math.max(request.endLine, request.line) : request.line,
      disabled: request.disabled === true,
      checks,
    });
  }
  return nodes;
}

/** How a request item ends in a run. */
export type Verdict = 'passed' | 'failed' | 'errored' | 'skipped';

/** What a run says about one line of the file. */
export interface Note {
  text: string;
  line: number;
}

/** The result of one check: a listed one (`id` of a `CheckNode`) or one that was not listed. */
export interface CheckResult {
  id: string;
  /** The assertion's expression or the test's name. */
  label: string;
  passed: boolean;
  /** Why it failed. */
  message?: string;
  /** Where it was evaluated: its line in the file. */
  line: number;
  /** From a failure message that says both (`expected status == 201, got 200`). */
  expected?: string;
  actual?: string;
}

export interface RequestResult {
  verdict: Verdict;
  /** The response's total time. */
  durationMs?: number;
  /** Why the request failed, errored or was skipped (for a failure, a summary at its line). */
  notes: Note[];
  /** The listed checks that have a result, in the order of the outcome. */
  checks: CheckResult[];
  /** Results that match no listed check (tests in script files, a handler that threw). */
  extra: CheckResult[];
  /** The listed checks without a result (the request was not sent, or a test did not run). */
  missing: string[];
}

/** The kinds of error that mean the request was not sent on purpose: the item is skipped. */
const SKIPPED_KINDS = new Set(['cancelled', 'disabled', 'not-confirmed']);

/**
 * What `outcome` says of `request` and its checks. Results are matched to listed checks
 * by line and label, then by line, then by label; the rest are extra. A request passes
 * when it got a response and every result passed; fails when a result did not pass; is
 * errored when it could not be sent (refused, or a transport error) and skipped when it
 * was not sent on purpose (cancelled, `# @disabled`, a `# @note` declined).
 */
export function requestResult(request: RequestNode, outcome: Outcome): RequestResult {
  const response = outcome.response;
  if (!response) {
    const error = outcome.error ?? { kind: 'unknown', message: 'no response' };
    const notes: Note[] = [{ text: `${error.kind}: ${error.message}`, line: request.line }];
    for (const diagnostic of error.diagnostics ?? []) {
      const hint = diagnostic.hint ? ` (hint: ${diagnostic.hint})` : '';
      notes.push({ text: `${diagnostic.code}: ${diagnostic.message}${hint}`, line: diagnostic.line });
    }
    return {
      verdict: SKIPPED_KINDS.has(error.kind) ? 'skipped' : 'errored',
      notes,
      checks: [],
      extra: [],
      missing: request.checks.map((check) => check.id),
    };
  }
  const { matched, extra } = matchAssertions(request, response.assertions ?? []);
  const checks = [...matched.entries()].map(([assertion, check]) => checkResult(check.id, assertion));
  const listed = new Set(matched.values());
  const failures = [...checks, ...extra].filter((result) => !result.passed);
  const total = checks.length + extra.length;
  const notes: Note[] =
    failures.length === 0
      ? []
      : [
          {
            text: `${failures.length} of ${total} ${total === 1 ? 'check' : 'checks'} failed: ${failures
              .map((failure) => failure.label)
              .join('; ')}`,
            line: request.line,
          },
        ];
  return {
    verdict: failures.length === 0 ? 'passed' : 'failed',
    durationMs: response.timing?.totalMs,
    notes,
    checks,
    extra,
    missing: request.checks.filter((check) => !listed.has(check)).map((check) => check.id),
  };
}

/** Each assertion paired with the listed check it reports on; the others as extra results. */
function matchAssertions(
  request: RequestNode,
  assertions: Assertion[],
): { matched: Map<Assertion, CheckNode>; extra: CheckResult[] } {
  const free = new Set(request.checks);
  const matched = new Map<Assertion, CheckNode>();
  const passes: ((check: CheckNode, assertion: Assertion) => boolean)[] = [
    (check, assertion) => check.line === assertion.line && check.label === assertion.expression,
    (check, assertion) => check.line === assertion.line,
    (check, assertion) => check.label === assertion.expression,
  ];
  for (const fits of passes) {
    for (const assertion of assertions) {
      if (matched.has(assertion)) {
        continue;
      }
      const check = [...free].find((candidate) => fits(candidate, assertion));
      if (check) {
        free.delete(check);
        matched.set(assertion, check);
      }
    }
  }
  // In the outcome's order, which is the file's.
  const ordered = new Map<Assertion, CheckNode>();
  for (const assertion of assertions) {
    const check = matched.get(assertion);
    if (check) {
      ordered.set(assertion, check);
    }
  }
  const extraIds = new Ids();
  const extra = assertions
    .filter((assertion) => !matched.has(assertion))
    .map((assertion) => checkResult(extraIds.take(`${extraPrefix(request.id)}${assertion.expression}`), assertion));
  return { matched: ordered, extra };
}

/** How the ids of a request's extra results start (what tells them from its listed checks). */
export function extraPrefix(requestId: string): string {
  return `${requestId}/result:`;
}

function checkResult(id: string, assertion: Assertion): CheckResult {
  const result: CheckResult = { id, label: assertion.expression, passed: assertion.passed, line: assertion.line };
  if (!assertion.passed) {
    result.message = assertion.message ?? 'failed';
    const parts =
      assertion.expected !== undefined && assertion.actual !== undefined
        ? likeForLike(assertion.expected, assertion.actual)
        : expectedAndActual(result.message);
    if (parts) {
      result.expected = parts.expected;
      result.actual = parts.actual;
    }
  }
  return result;
}

/**
 * The expected and actual values of a failure message shaped `expected X, got Y` (the
 * engine's message for an assertion that does not hold); for `X` shaped `field == V`,
 * the expected value is `V`, so that a diff compares like with like. Undefined for other
 * messages (what a script's test threw).
 */
export function expectedAndActual(message: string): { expected: string; actual: string } | undefined {
  const found = /^expected ([\s\S]*?), got ([\s\S]*)$/.exec(message);
  if (!found) {
    return undefined;
  }
  const [, wanted, actual] = found;
  return likeForLike(wanted, actual);
}

/** For `wanted` shaped `field == V`, `V`: what a diff compares with the actual value. */
export function likeForLike(wanted: string, actual: string): { expected: string; actual: string } {
  const equal = wanted.indexOf(' == ');
  return { expected: equal >= 0 ? wanted.slice(equal + 4) : wanted, actual };
}

/** The line the Test Results output shows for a request: what was sent and what came of it. */
export function outputLine(node: RequestNode, outcome: Outcome): string {
  const what = `${outcome.request.method} ${outcome.request.url}`;
  if (outcome.response) {
    const checks = outcome.response.assertions ?? [];
    const passed = checks.filter((check) => check.passed).length;
    const counted = checks.length > 0 ? ` · ${passed}/${checks.length} checks passed` : '';
    return `${node.label}: ${what} → ${responseStatus(outcome.response)} in ${Math.round(outcome.response.timing.totalMs)} ms${counted}`;
  }
  return `${node.label}: ${what} → ${outcome.error?.kind ?? 'error'}: ${outcome.error?.message ?? 'no response'}`;
}

/** A request to send in a run. */
export interface RunTarget {
  uri: string;
  index: number;
}

/**
 * The requests of a run in the order they are sent: files in the order first picked,
 * each file's requests by index, each once.
 */
export function runOrder<T extends RunTarget>(targets: T[]): T[] {
  const files = new Map<string, Map<number, T>>();
  for (const target of targets) {
    let requests = files.get(target.uri);
    if (!requests) {
      requests = new Map();
      files.set(target.uri, requests);
    }
    if (!requests.has(target.index)) {
      requests.set(target.index, target);
    }
  }
  return [...files.values()].flatMap((requests) => [...requests.values()].sort((a, b) => a.index - b.index));
}

/** The files discovery lists. */
export const TEST_FILES_GLOB = '**/*.{http,rest}';

/** The most files discovery lists (the first found); the rest are not in the view. */
export const MAX_TEST_FILES = 2000;

/** Folders discovery never looks into, on top of `files.exclude`. */
const ALWAYS_EXCLUDED = ['**/node_modules/**', '**/.git/**', '**/bower_components/**'];

/**
 * The exclude glob of discovery: the folders above and the `files.exclude` patterns that
 * are on (`true`; a `when` clause is dropped). Patterns with braces are left out: a glob
 * group cannot hold another.
 */
export function excludeGlob(filesExclude: Record<string, unknown> | undefined): string {
  const patterns = [...ALWAYS_EXCLUDED];
  for (const [pattern, on] of Object.entries(filesExclude ?? {})) {
    if (on === true && !/[{},]/.test(pattern) && !patterns.includes(pattern)) {
      patterns.push(pattern);
    }
  }
  return `{${patterns.join(',')}}`;
}

/** Whether a path is one of the files discovery lists. */
export function isTestFile(path: string): boolean {
  return /\.(http|rest)$/i.test(path);
}

/** Whether a path is inside one of the folders discovery never looks into. */
export function inExcludedFolder(path: string): boolean {
  return /\/(node_modules|\.git|bower_components)\//.test(path);
}

/** Unique ids: the second `x` is `x~2`, the third `x~3`. */
class Ids {
  private readonly seen = new Map<string, number>();

  take(base: string): string {
    const count = (this.seen.get(base) ?? 0) + 1;
    this.seen.set(base, count);
    return count === 1 ? base : `${base}~${count}`;
  }
}

function isRequest(value: unknown): value is DiscoveredRequest {
  return (
    isObject(value) &&
    typeof value.index === 'number' &&
    typeof value.method === 'string' &&
    typeof value.url === 'string' &&
    typeof value.line === 'number'
  );
}

function isCheck(value: unknown): value is DiscoveredCheck {
  return (
    isObject(value) &&
    (value.kind === 'assert' || value.kind === 'test') &&
    typeof value.label === 'string' &&
    typeof value.line === 'number'
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
