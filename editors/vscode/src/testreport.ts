// What a test run reports on the Testing view's items: one request's outcome as the
// results of its request item, its check items and the items of results no check lists
// (through `checks.ts`), with the failure messages at their lines (expected and actual
// when the message has both), the line of output of each request, and the queued and skipped
// states. The `vscode` half of `checks.ts`; `testing.ts` runs and calls it.

import * as vscode from 'vscode';
import { type CheckResult, extraPrefix, type Note, outputLine, type RequestNode, requestResult } from './checks';
import type { Outcome } from './outcome';

/** Whether the run may report on an item (inside what it was asked to run, outside what it left out). */
export type Inside = (item: vscode.TestItem) => boolean;

/**
 * The results of one request's outcome on the items the run may report on (`inside`):
 * the request item, its checks, and the items of its extra results (made with
 * `createItem` when missing, dropped when this outcome does not give them again).
 */
export function reportOutcome(
  run: vscode.TestRun,
  item: vscode.TestItem,
  node: RequestNode,
  outcome: Outcome,
  inside: Inside,
  createItem: (id: string, label: string, uri: vscode.Uri) => vscode.TestItem,
): void {
  const uri = item.uri!;
  const result = requestResult(node, outcome);
  run.appendOutput(`${outputLine(node, outcome)}\r\n`, new vscode.Location(uri, lineRange(node.line)), item);
  for (const check of result.checks) {
    const child = item.children.get(check.id);
    if (child && inside(child)) {
      reportCheck(run, child, check, uri);
    }
  }
  if (outcome.response) {
    // Results of an earlier run that this one did not give again go.
    const current = new Set(result.extra.map((extra) => extra.id));
    const stale: string[] = [];
    item.children.forEach((child) => {
      if (child.id.startsWith(extraPrefix(node.id)) && !current.has(child.id)) {
        stale.push(child.id);
      }
    });
    for (const id of stale) {
      item.children.delete(id);
    }
  }
  for (const extra of result.extra) {
    let child = item.children.get(extra.id);
    if (!child) {
      child = createItem(extra.id, extra.label, uri);
      child.description = 'script';
      item.children.add(child);
    }
    child.range = lineRange(extra.line);
    if (inside(child)) {
      reportCheck(run, child, extra, uri);
    }
  }
  for (const id of result.missing) {
    const child = item.children.get(id);
    if (child && inside(child)) {
      run.skipped(child);
    }
  }
  if (!inside(item)) {
    return;
  }
  const messages = () => result.notes.map((note: Note) => testMessage(note.text, uri, note.line));
  switch (result.verdict) {
    case 'passed':
      run.passed(item, result.durationMs);
      break;
    case 'failed':
      run.failed(item, messages(), result.durationMs);
      break;
    case 'errored':
      run.errored(item, messages());
      break;
    case 'skipped':
      run.skipped(item);
      break;
  }
}

function reportCheck(run: vscode.TestRun, item: vscode.TestItem, result: CheckResult, uri: vscode.Uri): void {
  if (result.passed) {
    run.passed(item);
    return;
  }
  const text = result.message ?? 'failed';
  const message =
    result.expected !== undefined && result.actual !== undefined
      ? vscode.TestMessage.diff(text, result.expected, result.actual)
      : new vscode.TestMessage(text);
  message.location = new vscode.Location(uri, lineRange(result.line));
  run.failed(item, message);
}

/** A request and its children enqueued, as far as the run may report on them. */
export function enqueue(run: vscode.TestRun, item: vscode.TestItem, inside: Inside): void {
  if (inside(item)) {
    run.enqueued(item);
  }
  item.children.forEach((child) => {
    if (inside(child)) {
      run.enqueued(child);
    }
  });
}

/** A request and its children skipped, as far as the run may report on them. */
export function skip(run: vscode.TestRun, item: vscode.TestItem, inside: Inside): void {
  if (inside(item)) {
    run.skipped(item);
  }
  item.children.forEach((child) => {
    if (inside(child)) {
      run.skipped(child);
    }
  });
}

/** A message at a line of `uri`. */
export function testMessage(text: string, uri: vscode.Uri, line: number): vscode.TestMessage {
  const message = new vscode.TestMessage(text);
  message.location = new vscode.Location(uri, lineRange(line));
  return message;
}

/** The start of a line, where the Testing view places items and messages. */
export function lineRange(line: number): vscode.Range {
  return new vscode.Range(line, 0, line, 0);
}
