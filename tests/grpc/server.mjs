// An independent gRPC server for Volley's tests: grpc-js with server reflection (none
// with --no-reflection), plaintext or TLS (--tls DIR), on 127.0.0.1 (port from --port, else a free one), serving
// protos/shop.proto. It prints `listening on PORT` when ready. `Place` with item "fail" answers INVALID_ARGUMENT;
// with item "slow" answers after 2 s.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import grpc from '@grpc/grpc-js';
import loader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';

const here = dirname(fileURLToPath(import.meta.url));
const definition = loader.loadSync(join(here, 'protos', 'shop.proto'), {
  includeDirs: [join(here, 'protos')],
  longs: String,
  defaults: true,
  keepCase: false,
});
const shop = grpc.loadPackageDefinition(definition).shop.v1;

function order(request, id, metadata) {
  return { ...request, id, requestId: metadata.get('x-request-id')[0] ?? '' };
}

const server = new grpc.Server();
server.addService(shop.Orders.service, {
  Place(call, done) {
    if (call.request.item === 'fail') {
      done({ code: grpc.status.INVALID_ARGUMENT, details: 'no such item: "fail" (try another)' });
      return;
    }
    const reply = () => {
      const headers = new grpc.Metadata();
      headers.set('x-served-by', 'grpc-js');
      call.sendMetadata(headers);
      done(null, order(call.request, 'order-1', call.metadata));
    };
    if (call.request.item === 'slow') setTimeout(reply, 2000);
    else reply();
  },
  List(call) {
    for (let index = 1; index <= call.request.count; index += 1) {
      call.write({ id: `order-${index}`, item: `item ${index}`, quantity: String(index) });
    }
    call.end();
  },
  Total(call, done) {
    let units = 0n;
    let currency = '';
    call.on('data', (money) => {
      units += BigInt(money.units);
      currency = money.currency;
    });
    call.on('end', () => done(null, { currency, units: units.toString() }));
  },
  Chat(call) {
    // Each line echoed with its position and how many lines had come when the echo was
    // written; a line whose text starts with "slow" is echoed after 300 ms, so that a
    // client that waits for the echo before its next line can be told from one that
    // does not.
    let heard = 0;
    let pending = 0;
    let ended = false;
    call.on('data', (line) => {
      heard += 1;
      pending += 1;
      const position = heard;
      setTimeout(() => {
        const slow = line.text.startsWith('slow');
        call.write({ position, text: `echo: ${line.text}${slow ? ` (heard ${heard})` : ''}` });
        pending -= 1;
        if (ended && pending === 0) call.end();
      }, line.text.startsWith('slow') ? 300 : 0);
    });
    call.on('end', () => {
      ended = true;
      if (pending === 0) call.end();
    });
  },
});
if (!process.argv.includes('--no-reflection')) new ReflectionService(definition).addToServer(server);

const at = process.argv.indexOf('--port');
const port = at === -1 ? 0 : Number(process.argv[at + 1]);
// --tls DIR: serve TLS with DIR/ca.pem, DIR/server.pem and DIR/server-key.pem.
const tls = process.argv.indexOf('--tls');
let credentials = grpc.ServerCredentials.createInsecure();
if (tls !== -1) {
  const directory = process.argv[tls + 1];
  const read = (name) => readFileSync(join(directory, name));
  credentials = grpc.ServerCredentials.createSsl(read('ca.pem'), [{ cert_chain: read('server.pem'), private_key: read('server-key.pem') }], false);
}
server.bindAsync(`127.0.0.1:${port}`, credentials, (error, bound) => {
  if (error) throw error;
  console.log(`listening on ${bound}`);
});
