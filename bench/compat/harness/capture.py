#!/usr/bin/env python3
"""Capture server: records every raw HTTP/1.x request it receives, answers 200 JSON.

usage: capture.py LOGDIR PORT [PORT...]
One JSON line per event is appended to LOGDIR/<port>.jsonl:
  {"kind":"req","conn":N,"method":..,"target":..,"version":..,"headers":[[name,value],..],
   "body_b64":..,"chunked":bool}
  {"kind":"mark","file":..}     (from GET /__mark/<id>: the driver's file separator)
  {"kind":"raw","data_b64":..}  (bytes that did not parse as HTTP/1.x, e.g. an HTTP/2 preface)
  {"kind":"ws","dir":"in","opcode":..,"data_b64":..}  (WebSocket frames received)
A WebSocket upgrade is accepted (101); each text/binary frame received is echoed once
with {"ok":true,...} and the connection is closed after 1 s without frames.
"""
import asyncio, base64, hashlib, json, os, sys, time

RESP_BODY = (b'{"ok":true,"id":1,"token":"t","accessToken":"t","access_token":"t","refreshToken":"r",'
             b'"refresh_token":"r","token_type":"Bearer","expires_in":3600,"data":{"id":1,"token":"t"}}')
WS_GUID = b'258EAFA5-E914-47DA-95CA-C5AB0DC11B65'
conn_counter = 0


def b64(b):
    return base64.b64encode(b).decode()


class Log:
    def __init__(self, path):
        self.f = open(path, 'a', buffering=1)

    def write(self, obj):
        obj['t'] = time.time()
        self.f.write(json.dumps(obj) + '\n')
        self.f.flush()


async def handle(reader, writer, log):
    global conn_counter
    conn_counter += 1
    conn = conn_counter
    buf = b''
    try:
        while True:
            # read until end of headers
            while b'\r\n\r\n' not in buf:
                chunk = await asyncio.wait_for(reader.read(65536), timeout=30)
                if not chunk:
                    if buf.strip():
                        log.write({'kind': 'raw', 'conn': conn, 'data_b64': b64(buf)})
                    return
                buf += chunk
                if buf.startswith(b'PRI * HTTP/2.0'):
                    log.write({'kind': 'raw', 'conn': conn, 'data_b64': b64(buf[:200]), 'note': 'h2 preface'})
                    return
                if len(buf) > 2_000_000:
                    log.write({'kind': 'raw', 'conn': conn, 'data_b64': b64(buf[:4000]), 'note': 'too large'})
                    return
            head, buf = buf.split(b'\r\n\r\n', 1)
            lines = head.split(b'\r\n')
            try:
                method, target, version = lines[0].decode('latin1').split(' ', 2)
            except ValueError:
                log.write({'kind': 'raw', 'conn': conn, 'data_b64': b64(head)})
                return
            headers = []
            for l in lines[1:]:
                if b':' in l:
                    n, v = l.split(b':', 1)
                    headers.append([n.decode('latin1'), v.strip().decode('latin1')])
            hmap = {n.lower(): v for n, v in headers}
            if target.startswith('/__mark/'):
                log.write({'kind': 'mark', 'file': target[len('/__mark/'):]})
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
                await writer.drain()
                return
            if hmap.get('expect', '').lower() == '100-continue':
                writer.write(b'HTTP/1.1 100 Continue\r\n\r\n')
                await writer.drain()
            body = b''
            chunked = 'chunked' in hmap.get('transfer-encoding', '').lower()
            if chunked:
                while True:
                    while b'\r\n' not in buf:
                        c = await asyncio.wait_for(reader.read(65536), timeout=30)
                        if not c:
                            raise ConnectionError
                        buf += c
                    size_line, buf = buf.split(b'\r\n', 1)
                    size = int(size_line.split(b';')[0].strip() or b'0', 16)
                    while len(buf) < size + 2:
                        c = await asyncio.wait_for(reader.read(65536), timeout=30)
                        if not c:
                            raise ConnectionError
                        buf += c
                    body += buf[:size]
                    buf = buf[size + 2:]
                    if size == 0:
                        # trailers: consume until blank line (we already consumed CRLF)
                        break
            elif 'content-length' in hmap:
                n = int(hmap['content-length'] or 0)
                while len(buf) < n:
                    c = await asyncio.wait_for(reader.read(65536), timeout=30)
                    if not c:
                        break
                    buf += c
                body, buf = buf[:n], buf[n:]
            log.write({'kind': 'req', 'conn': conn, 'method': method, 'target': target, 'version': version,
                       'headers': headers, 'body_b64': b64(body), 'chunked': chunked})
            if hmap.get('upgrade', '').lower() == 'websocket' and 'sec-websocket-key' in hmap:
                accept = base64.b64encode(hashlib.sha1(hmap['sec-websocket-key'].encode() + WS_GUID).digest()).decode()
                writer.write(('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
                              f'Sec-WebSocket-Accept: {accept}\r\n\r\n').encode())
                await writer.drain()
                await websocket(reader, writer, log, conn, buf)
                return
            accept = hmap.get('accept', '')
            if 'text/event-stream' in accept:
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n'
                             b'retry: 600000\n\ndata: {"ok":true}\n\n')
                await writer.drain()
                return
            if method == 'CONNECT':
                writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
                await writer.drain()
                return
            writer.write(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: '
                         + str(len(RESP_BODY)).encode() + b'\r\n\r\n' + (b'' if method == 'HEAD' else RESP_BODY))
            await writer.drain()
            if hmap.get('connection', '').lower() == 'close':
                return
    except (asyncio.TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
        return
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def websocket(reader, writer, log, conn, buf):
    async def readn(n):
        nonlocal buf
        while len(buf) < n:
            c = await asyncio.wait_for(reader.read(65536), timeout=1.5)
            if not c:
                raise ConnectionError
            buf += c
        out, buf = buf[:n], buf[n:]
        return out
    try:
        while True:
            h = await readn(2)
            op, ln = h[0] & 0x0f, h[1] & 0x7f
            masked = h[1] & 0x80
            if ln == 126:
                ln = int.from_bytes(await readn(2), 'big')
            elif ln == 127:
                ln = int.from_bytes(await readn(8), 'big')
            mask = await readn(4) if masked else b'\0\0\0\0'
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(await readn(ln)))
            log.write({'kind': 'ws', 'conn': conn, 'dir': 'in', 'opcode': op, 'data_b64': b64(data)})
            if op == 8:
                writer.write(b'\x88\x00')
                await writer.drain()
                return
            if op in (1, 2):
                msg = b'{"ok":true,"id":1,"token":"t"}'
                writer.write(b'\x81' + bytes([len(msg)]) + msg)
                await writer.drain()
    except (asyncio.TimeoutError, ConnectionError):
        try:
            writer.write(b'\x88\x02\x03\xe8')
            await writer.drain()
        except Exception:
            pass


async def main():
    logdir = sys.argv[1]
    os.makedirs(logdir, exist_ok=True)
    servers = []
    for p in sys.argv[2:]:
        log = Log(os.path.join(logdir, f'{p}.jsonl'))
        srv = await asyncio.start_server(lambda r, w, log=log: handle(r, w, log), '127.0.0.1', int(p))
        servers.append(srv)
    print('listening', sys.argv[2:], flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == '__main__':
    asyncio.run(main())
