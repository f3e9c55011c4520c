// Outcomes shaped like the language server's answers (docs/lsp.md), for the tests.

import type { Outcome, ResponseInfo } from '../src/outcome';

export function response(overrides: Partial<ResponseInfo> = {}): ResponseInfo {
  return {
    status: 200,
    statusText: 'OK',
    httpVersion: 'HTTP/1.1',
    url: 'https://api.example.com/login',
    headers: [['content-type', 'application/json']],
    contentType: 'application/json',
    body: '{"token": "abc"}',
    bodyEncoding: 'text',
    truncated: false,
    timing: { ttfbMs: 12.1, totalMs: 12.9 },
    assertions: [],
    ...overrides,
  };
}

export function outcome(overrides: Partial<ResponseInfo> = {}, name: string | null = 'login'): Outcome {
  return {
    request: { index: 0, name, method: 'POST', url: '{{host}}/login', line: 5 },
    response: response(overrides),
  };
}

export function failure(kind: string, message: string): Outcome {
  return {
    request: { index: 1, name: null, method: 'GET', url: '{{host}}/me', line: 9 },
    error: { kind, message },
  };
}
