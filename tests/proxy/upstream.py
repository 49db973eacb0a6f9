# A workload for the proxy's tests: serves HTTP/1.1 (keep-alive) on every port named by a
# GPUAAS_PORT_<port> variable (or by argv for the benchmark), threaded.
#   GET  /headers      the request's headers, one "name: value" a line, and "port=<port>"
#   GET  /stream?n=N   N bytes, chunked, in 64 KiB pieces
#   POST /upload       reads the body (chunked or sized) and answers its length
#   POST /headers      as GET /headers (a bodiless POST)
#   GET  /cut          promises 1,000,000 bytes, sends 10, closes
#   GET  /ws           a WebSocket echo (text and binary frames, unfragmented)
#   GET  /seen         every request line received before, one a line (smuggling tests)
#   anything else      "hello from <port>"
import base64, hashlib, os, socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
SEEN = []
SEEN_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, body, code=200):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(data)

    def reply_headers(self):
        lines = [f"{k.lower()}: {v}" for k, v in self.headers.items()]
        self.reply("\n".join(lines + [f"port={self.server.template_port}"]) + "\n")

    def do_GET(self):
        port = self.server.server_address[1]
        path, _, query = self.path.partition("?")
        if path == "/seen":
            with SEEN_LOCK:
                self.reply("".join(line + "\n" for line in SEEN))
            return
        with SEEN_LOCK:
            SEEN.append(self.requestline)
        if path == "/headers":
            self.reply_headers()
        elif path == "/stream":
            n = int(dict(p.split("=") for p in query.split("&"))["n"])
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            piece = b"x" * 65536
            while n > 0:
                k = min(n, len(piece))
                self.wfile.write(b"%x\r\n" % k + piece[:k] + b"\r\n")
                n -= k
            self.wfile.write(b"0\r\n\r\n")
        elif path == "/cut":
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            self.websocket()
        else:
            self.reply(f"hello from {self.server.template_port}\n")

    def do_POST(self):
        with SEEN_LOCK:
            SEEN.append(self.requestline)
        if self.path.startswith("/headers"):
            self.reply_headers()
            return
        total = 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                while size > 0:
                    got = self.rfile.read(min(size, 65536))
                    size -= len(got)
                    total += len(got)
                self.rfile.readline()
        else:
            left = int(self.headers.get("Content-Length", "0"))
            while left > 0:
                got = self.rfile.read(min(left, 65536))
                left -= len(got)
                total += len(got)
        self.reply(f"received {total}\n")

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        r = self.rfile
        while True:
            head = r.read(2)
            if len(head) < 2:
                break
            opcode, n = head[0] & 0x0F, head[1] & 0x7F
            if n == 126:
                n = int.from_bytes(r.read(2), "big")
            elif n == 127:
                n = int.from_bytes(r.read(8), "big")
            mask = r.read(4) if head[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(r.read(n)))
            if opcode == 8:
                self.wfile.write(b"\x88\x00")
                break
            out = bytes([0x80 | opcode])
            if len(data) < 126:
                out += bytes([len(data)])
            elif len(data) < 65536:
                out += bytes([126]) + len(data).to_bytes(2, "big")
            else:
                out += bytes([127]) + len(data).to_bytes(8, "big")
            self.wfile.write(out + data)
            self.wfile.flush()
        self.close_connection = True


def serve(template_port, host_port, address):
    server = ThreadingHTTPServer((address, host_port), Handler)
    server.daemon_threads = True
    server.template_port = template_port
    server.serve_forever()


# A workload (a container) serves on every address of its own network namespace: the node
# forwards its host ports to the container's address; a local process only on loopback.
ports = [(int(k[len("GPUAAS_PORT_"):]), int(v), "0.0.0.0") for k, v in os.environ.items()
         if k.startswith("GPUAAS_PORT_")]
ports += [(int(a), int(a), "127.0.0.1") for a in sys.argv[1:]]
threads = [threading.Thread(target=serve, args=p, daemon=True) for p in ports]
for t in threads:
    t.start()
for t in threads:
    t.join()
