// What a response's status reads as wherever the extension shows it (the panel, the
// history): the HTTP status, or for a gRPC call its own status (`gRPC NOT_FOUND (5): …`)
// in place of the HTTP exchange's 200. Pure: no `vscode` import.

import type { GrpcInfo, ResponseInfo } from './outcome';

/** `200 OK`; for a gRPC call `gRPC OK (0)`, or `gRPC NOT_FOUND (5): <message>`. */
export function responseStatus(response: ResponseInfo): string {
  if (response.grpc) {
    return grpcStatus(response.grpc);
  }
  return `${response.status} ${response.statusText}`.trim();
}

/** A gRPC call's status, with the server's message (on one line) when it says more than the code. */
export function grpcStatus(grpc: GrpcInfo): string {
  const status = `gRPC ${grpc.code} (${grpc.number})`;
  // grpc-js sends `grpc-message: OK` with every OK: said once is enough (as the CLI does).
  const message = grpc.message.replace(/\s*\n\s*/g, ' ').trim();
  return message === '' || message === grpc.code ? status : `${status}: ${message}`;
}

/** The kind of a gRPC call and how many messages the server sent: `server-streaming · 3 messages`. */
export function grpcCall(grpc: GrpcInfo): string {
  return `${grpc.kind} · ${grpc.messages} ${grpc.messages === 1 ? 'message' : 'messages'}`;
}

/** How the status is coloured: a 4xx or 5xx, and a gRPC call that did not end `OK`, fail. */
export function statusClass(response: ResponseInfo): 'pass' | 'redirect' | 'fail' {
  if (response.grpc) {
    return response.grpc.number === 0 ? 'pass' : 'fail';
  }
  return response.status >= 400 ? 'fail' : response.status >= 300 ? 'redirect' : 'pass';
}
