#!/usr/bin/env python3
"""A tenant's own registry that serves whatever its directory holds, for the attack tests.

    hostile_registry.py PORT DIR

Speaks just enough of the OCI distribution API for skopeo: GET /v2/, GET and HEAD of
/v2/<repo>/manifests/<digest> (DIR/manifests/<digest>, its media type in <digest>.type) and of
/v2/<repo>/blobs/<digest> (DIR/blobs/<digest>). A blob named in DIR/refused/<digest> is refused
(403 DENIED): the registry does not consent to serving it. A blob with DIR/slow/<digest> is sent
a 64 KiB piece every 0.2 s. Every request's method and path go to DIR/requests, one a line.
Nothing is checked: the bytes are the attack.
"""
import http.server
import os
import sys
import time

port, root = int(sys.argv[1]), sys.argv[2]


def path_in(kind, name):
    name = os.path.basename(name)
    return os.path.join(root, kind, name)


class Registry(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, body):
        with open(os.path.join(root, "requests"), "a") as f:
            f.write(self.command + " " + self.path + "\n")
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") == "/v2":
            return self.reply(200, b"{}", "application/json", body=body)
        if "/manifests/" in path:
            name = path.rsplit("/", 1)[1]
            target = path_in("manifests", name)
            if not os.path.exists(target):
                return self.error(404, "MANIFEST_UNKNOWN", body)
            with open(target + ".type") as f:
                media_type = f.read().strip()
            return self.reply(200, open(target, "rb").read(), media_type, name, body)
        if "/blobs/" in path:
            name = path.rsplit("/", 1)[1]
            if os.path.exists(path_in("refused", name)):
                return self.error(403, "DENIED", body)
            target = path_in("blobs", name)
            if not os.path.exists(target):
                return self.error(404, "BLOB_UNKNOWN", body)
            return self.send_file(target, name, body, os.path.exists(path_in("slow", name)))
        return self.error(404, "NAME_UNKNOWN", body)

    def error(self, code, what, body):
        data = ('{"errors":[{"code":"%s","message":"%s"}]}' % (what, what.lower())).encode()
        self.reply(code, data, "application/json", body=body)

    def reply(self, code, data, media_type, digest=None, body=True):
        self.send_response(code)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(data)))
        if digest:
            self.send_header("Docker-Content-Digest", digest)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def send_file(self, target, digest, body, slow):
        size = os.path.getsize(target)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.send_header("Docker-Content-Digest", digest)
        self.end_headers()
        if not body:
            return
        with open(target, "rb") as f:
            while True:
                piece = f.read(64 << 10)
                if not piece:
                    break
                self.wfile.write(piece)
                if slow:
                    time.sleep(0.2)

    def do_GET(self):
        self.answer(True)

    def do_HEAD(self):
        self.answer(False)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Registry).serve_forever()
