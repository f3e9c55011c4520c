// Type-checked only (`npm run typecheck`): the package's types used the way SPEC.md's
// client library describes, so index.d.ts cannot drift from its tables unnoticed.
import {
  type Client,
  type ClientConfig,
  type GrpcStatus,
  type RemoteClient,
  type RunOptions,
  CookieJar,
  VolleyError,
  createClient,
  createNodeIO,
  createRemoteClient,
  type IO,
} from '@volley-http/client';

async function bearerFlow(): Promise<void> {
  const memory: IO = {
    readText: async (path: string) => (path.endsWith('.http') ? 'GET {{host}}/health\n' : ''),
    exists: (path: string) => path.endsWith('.http'),
  };
  const io: IO = Math.random() > 2 ? memory : createNodeIO();
  const config: ClientConfig = {
    io,
    variables: { host: 'http://127.0.0.1:8080', user: { name: 'ada' } },
    cookieJar: new CookieJar({ path: '.volley/cookies.json' }),
    transport: { fetch: (request: Request) => fetch(request) },
    resolvers: {
      $tenant: () => 'acme',
      $signature: async (payload: string, key: string) => `${payload}.${key}`,
    },
    timeout: 5000,
    defaults: { headers: { 'X-Client': 'example' }, followRedirects: true, validateSSL: false },
  };
  const client: Client = createClient(config);
  const viaFunction: Client = createClient({ transport: (request: Request) => fetch(request) });
  const treqShape: Client = createClient({
    transport: {
      capabilities: { proxy: false, validateSSL: true },
      fetch: (url: string, init: RequestInit & { signal: AbortSignal }) => fetch(url, init),
    },
  });
  void viaFunction;
  void treqShape;

  const login: Response = await client.run('./api.http', { variables: { password: 'lovelace' } });
  const { token } = (await login.json()) as { token: string };
  client.setVariable('token', token);
  client.setVariables({ apiKey: 'k', retries: 3 });
  const variables: Record<string, unknown> = client.getVariables();
  void variables;

  const orders = await client.runString('GRPC localhost:50051/shop.v1.Orders/List\n\n{"count": 3}\n');
  const status: GrpcStatus | undefined = orders.grpc;
  if (status !== undefined && status.code !== 'OK') void [status.number, status.message, status.kind];

  const controller = new AbortController();
  const options: RunOptions = { timeout: 1000, signal: controller.signal, variables: { id: 7 } };
  try {
    const me = await client.runString('GET {{host}}/me\nAuthorization: Bearer {{token}}\n', options);
    const url: string = me.url;
    const redirected: boolean = me.redirected;
    void [url, redirected, me.ok, me.status, me.headers.get('content-type')];
  } catch (error) {
    if (error instanceof VolleyError) {
      const where: string = `${error.kind} ${error.code ?? ''} at ${error.line ?? '?'}:${error.column ?? '?'}`;
      void where;
    } else if (error instanceof DOMException && error.name === 'AbortError') {
      // cancelled
    }
  }
}

async function remote(): Promise<void> {
  const client: RemoteClient = createRemoteClient({
    serverUrl: 'http://127.0.0.1:4000',
    token: 'secret',
    flowLabel: 'checkout',
    flowMeta: { build: 42 },
    profile: 'dev',
    timeout: 10_000,
    variables: { host: 'http://127.0.0.1:8080' },
  });
  const sessionId: string | undefined = client.getSessionId();
  const flowId: string | undefined = client.getFlowId();
  void [sessionId, flowId];
  await client.run('./api.http');
  client.setVariable('token', 'next');
  await client.runString('GET {{host}}/me\n', { signal: AbortSignal.timeout(1000) });
  await client.close();
}

const custom = new VolleyError('no token in the login response', { kind: 'other', hint: 'log in first' });
void custom.kind;

// @ts-expect-error: timeout is a number of milliseconds
createClient({ timeout: '5s' });
// @ts-expect-error: run needs a path
void createClient().run();

void [bearerFlow, remote];
