// An HTTP server on 127.0.0.1 that checks the AWS Signature V4 of every request it
// receives with aws4 (an implementation independent of Volley's), as an AWS service
// would: the signature is computed again over the headers the request says it signed,
// with the secret key of its access key id, and compared.
//
// Keys: SIGV4_KEYS="AKID:secret,AKID2:secret2". Prints `listening on URL`; stops when
// its stdin closes. Answers 200 {"valid": true, ...} or 403 {"valid": false,
// "reason", "expected", "canonical"}.
import http from 'node:http';
import aws4 from 'aws4';

const keys = new Map(
  (process.env.SIGV4_KEYS || '').split(',').filter(Boolean).map((pair) => {
    const at = pair.indexOf(':');
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

function verify(request, body) {
  const authorization = request.headers.authorization || '';
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(authorization);
  if (!match) return { valid: false, reason: `not a Signature V4 authorization: ${authorization}` };
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match;
  const secretAccessKey = keys.get(accessKeyId);
  if (!secretAccessKey) return { valid: false, reason: `unknown access key ${accessKeyId}` };
  const datetime = request.headers['x-amz-date'] || '';
  if (!datetime.startsWith(date)) return { valid: false, reason: `x-amz-date ${datetime} is not of ${date}` };
  const names = signedHeaders.split(';');
  const headers = {};
  const include = {};
  for (const name of names) {
    if (request.headers[name] === undefined) return { valid: false, reason: `signed header ${name} missing` };
    headers[name] = request.headers[name];
    include[name] = true;
  }
  const signer = new aws4.RequestSigner({
    method: request.method,
    host: request.headers.host,
    path: request.url,
    headers,
    body,
    service,
    region,
    doNotModifyHeaders: true,
    extraHeadersToInclude: include,
  }, { accessKeyId, secretAccessKey, sessionToken: request.headers['x-amz-security-token'] });
  signer.datetime = datetime;
  const expected = signer.signature();
  const canonical = signer.canonicalString();
  if (expected !== signature) return { valid: false, reason: 'signature mismatch', expected, canonical };
  return { valid: true, accessKeyId, region, service, signedHeaders: names, canonical };
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    const verdict = verify(request, body.length ? body : undefined);
    response.writeHead(verdict.valid ? 200 : 403, { 'content-type': 'application/json' });
    response.end(JSON.stringify(verdict));
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
