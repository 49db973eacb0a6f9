#!/usr/bin/python3
"""webui-demo: a small stand-in for the Stable Diffusion WebUI, the `webui-demo` image's program.

It behaves the way the real WebUI does towards its users and the platform, without a model:
  GET  /                    a page with a prompt form; its script queues a job and follows it
  POST /api/generate        {"prompt": "...", "steps": N} -> {"job_id": "..."} (queued)
  GET  /api/jobs/<id>       the job: state (queued, running, done, failed), step, total, output
  GET  /api/jobs            every job this process knows, newest first
  WS   /ws/jobs/<id>        progress: one JSON message per step {"job_id", "state", "step",
                            "total", "output"}, the current state first, closed once it ends
  GET  /outputs/<file>      a finished job's image and its .json sidecar
Jobs run one at a time, like generations on one GPU. Each writes a PNG made from its prompt
(the same prompt and seed give the same image) and a .json sidecar to the storage's
outputs directory, so they outlive the instance and are reachable over S3.

Every request but the page itself must carry the instance's proxy token, `Authorization: token
<GPUAAS_PROXY_TOKEN>`, which only the access proxy sends (the way the real WebUI takes --api-auth
and JupyterHub's single-user servers a token): the WebUI answers the proxy only, not another
workload that reaches its host port over the node's network. The page is the same static form
for everyone, and the probe asks for it.

A second, read-only server, the gallery, lists and serves the finished outputs (no API, no
WebSocket, nothing that writes): its port is the one a template may mark is_public to share the
results without credentials while the WebUI itself stays private to its tenant.

Environment (the image's defaults set the WEBUI_* ones):
  GPUAAS_PORT_7860    the WebUI's host port (the agent's)
  GPUAAS_PORT_7861    the gallery's host port; no gallery when unset
  GPUAAS_PROXY_TOKEN  the instance's proxy token (the instance service's)
  WEBUI_IP            the address to bind (0.0.0.0: the proxy reaches workloads at their node's
                      advertised address; see tools/images/README.md)
  WEBUI_BASE_URL      the path both servers serve under ("/"), the ports' base_url
  WEBUI_OUTPUT_DIR    where outputs go (/data/outputs; $HOME/outputs without a /data mount)
  WEBUI_STEP_SECONDS  how long one "denoising step" takes (0.05)
"""
import asyncio
import collections
import hashlib
import hmac
import json
import os
import re
import struct
import time
import uuid
import zlib

import tornado.escape
import tornado.log
import tornado.web
import tornado.websocket

MAX_PROMPT_BYTES = 2000
MAX_STEPS = 150
MAX_JOBS_KEPT = 1000
IMAGE_SIZE = 128
JOB_ID = re.compile(r"^[a-f0-9]{16}$")
OUTPUT_PNG = re.compile(r"^[a-f0-9]{16}\.png$")


def png_bytes(width, height, rows):
    """A truecolour PNG of `rows` (each `width` RGB triples as bytes), written by hand."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    raw = b"".join(b"\x00" + row for row in rows)  # filter type 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def render(prompt, seed, size=IMAGE_SIZE):
    """A deterministic picture of the prompt: colours and waves drawn from its hash."""
    h = hashlib.sha256(("%d:%s" % (seed, prompt)).encode()).digest()
    c1, c2 = h[0:3], h[3:6]
    fx, fy = 1 + h[6] % 7, 1 + h[7] % 7
    rows = []
    for y in range(size):
        row = bytearray()
        for x in range(size):
            t = ((x * fx + y * fy + h[8 + (x * y) % 24]) % size) / size
            row += bytes(int(a + (b - a) * t) & 0xFF for a, b in zip(c1, c2))
        rows.append(bytes(row))
    return png_bytes(size, size, rows)


def write_atomically(path, data):
    tmp = "%s.%s.tmp" % (path, uuid.uuid4().hex[:8])
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


class Job:
    def __init__(self, prompt, steps, seed):
        self.id = uuid.uuid4().hex[:16]
        self.prompt, self.steps, self.seed = prompt, steps, seed
        self.state, self.step, self.output, self.error = "queued", 0, "", ""
        self.created = time.time()
        self.listeners = set()

    def view(self):
        v = {"job_id": self.id, "state": self.state, "step": self.step, "total": self.steps,
             "prompt": self.prompt, "seed": self.seed, "output": self.output}
        if self.error:
            v["error"] = self.error
        return v

    def done(self):
        return self.state in ("done", "failed")


class Generator:
    """The job queue and its one worker: the stand-in for the model on the GPU."""

    def __init__(self, output_dir, step_seconds):
        self.output_dir, self.step_seconds = output_dir, step_seconds
        self.jobs = collections.OrderedDict()
        self.queue = asyncio.Queue()

    def submit(self, prompt, steps, seed):
        job = Job(prompt, steps, seed)
        self.jobs[job.id] = job
        while len(self.jobs) > MAX_JOBS_KEPT:
            oldest = next(iter(self.jobs.values()))
            if not oldest.done():
                break
            self.jobs.popitem(last=False)
        self.queue.put_nowait(job)
        return job

    def find(self, job_id):
        """A job of this process, or one an earlier run left in the outputs (done)."""
        if job_id in self.jobs:
            return self.jobs[job_id].view()
        try:
            with open(os.path.join(self.output_dir, job_id + ".json")) as f:
                sidecar = json.load(f)
        except (OSError, ValueError):
            return None
        return {"job_id": job_id, "state": "done", "step": sidecar.get("steps", 0),
                "total": sidecar.get("steps", 0), "prompt": sidecar.get("prompt", ""),
                "seed": sidecar.get("seed", 0), "output": "outputs/%s.png" % job_id}

    def publish(self, job):
        message = json.dumps(job.view())
        for ws in list(job.listeners):
            try:
                ws.write_message(message)
                if job.done():
                    ws.close()
            except tornado.websocket.WebSocketClosedError:
                job.listeners.discard(ws)

    async def run(self):
        while True:
            job = await self.queue.get()
            job.state = "running"
            self.publish(job)
            try:
                for step in range(1, job.steps + 1):
                    await asyncio.sleep(self.step_seconds)
                    job.step = step
                    if step < job.steps:
                        self.publish(job)
                self.save(job)
                job.state, job.output = "done", "outputs/%s.png" % job.id
            except OSError as e:  # a full or read-only storage
                job.state, job.error = "failed", "writing the output: %s" % e.strerror
            self.publish(job)

    def save(self, job):
        os.makedirs(self.output_dir, exist_ok=True)
        image = render(job.prompt, job.seed)
        png = os.path.join(self.output_dir, job.id + ".png")
        write_atomically(png, image)
        sidecar = {"job_id": job.id, "prompt": job.prompt, "steps": job.steps, "seed": job.seed,
                   "width": IMAGE_SIZE, "height": IMAGE_SIZE, "created": job.created,
                   "finished": time.time(), "sha256": hashlib.sha256(image).hexdigest(),
                   "instance_id": os.environ.get("GPUAAS_INSTANCE_ID", "")}
        write_atomically(os.path.join(self.output_dir, job.id + ".json"),
                         json.dumps(sidecar, indent=1).encode())


def require_proxy_token(handler):
    """401 unless `handler`'s request carries the proxy token (the application's setting)."""
    expected = ("token " + handler.settings["proxy_token"]).encode()
    given = handler.request.headers.get("Authorization", "").encode()
    if not hmac.compare_digest(given, expected):
        raise tornado.web.HTTPError(401, reason="the access proxy's token is required")


class JsonHandler(tornado.web.RequestHandler):
    def prepare(self):
        require_proxy_token(self)

    def write_json(self, status, body):
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def write_error(self, status_code, **kwargs):
        self.write_json(status_code, {"error": self._reason})


class GenerateHandler(JsonHandler):
    def initialize(self, generator):
        self.generator = generator

    def post(self):
        try:
            body = tornado.escape.json_decode(self.request.body or b"{}")
        except ValueError:
            return self.write_json(400, {"error": "the body is not JSON"})
        if not isinstance(body, dict):
            return self.write_json(400, {"error": "the body is not a JSON object"})
        prompt, steps, seed = body.get("prompt"), body.get("steps", 20), body.get("seed", 0)
        if not isinstance(prompt, str) or not prompt.strip():
            return self.write_json(400, {"error": "prompt: a non-empty string is required"})
        if len(prompt.encode()) > MAX_PROMPT_BYTES:
            return self.write_json(400, {"error": "prompt: longer than %d bytes" % MAX_PROMPT_BYTES})
        if type(steps) is not int or not 1 <= steps <= MAX_STEPS:
            return self.write_json(400, {"error": "steps: an integer from 1 to %d" % MAX_STEPS})
        if type(seed) is not int or not 0 <= seed < 2**32:
            return self.write_json(400, {"error": "seed: an integer from 0 to 2^32-1"})
        job = self.generator.submit(prompt, steps, seed)
        self.write_json(202, {"job_id": job.id})


class JobHandler(JsonHandler):
    def initialize(self, generator):
        self.generator = generator

    def get(self, job_id):
        job = self.generator.find(job_id) if JOB_ID.match(job_id) else None
        if job is None:
            return self.write_json(404, {"error": "no such job"})
        self.write_json(200, job)


class JobsHandler(JsonHandler):
    def initialize(self, generator):
        self.generator = generator

    def get(self):
        jobs = [j.view() for j in reversed(self.generator.jobs.values())]
        self.write_json(200, {"jobs": jobs})


class ProgressSocket(tornado.websocket.WebSocketHandler):
    def initialize(self, generator):
        self.generator = generator
        self.job = None

    def prepare(self):
        require_proxy_token(self)

    def check_origin(self, origin):
        # The access proxy admits only the instance's tenant and serves it under its own host
        # name; the page's Origin is that host, never this process's.
        return True

    def open(self, job_id):
        self.job = self.generator.jobs.get(job_id)
        if self.job is None:
            found = self.generator.find(job_id) if JOB_ID.match(job_id) else None
            if found is None:
                self.close(4404, "no such job")
                return
            self.write_message(json.dumps(found))
            self.close()
            return
        self.write_message(json.dumps(self.job.view()))
        if self.job.done():
            self.close()
        else:
            self.job.listeners.add(self)

    def on_message(self, message):
        pass  # progress flows one way

    def on_close(self):
        if self.job is not None:
            self.job.listeners.discard(self)


class OutputHandler(tornado.web.StaticFileHandler):
    def prepare(self):
        require_proxy_token(self)


class PageHandler(tornado.web.RequestHandler):
    def initialize(self, page):
        self.page = page

    def get(self):
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(self.page)


class GalleryHandler(tornado.web.RequestHandler):
    def initialize(self, output_dir):
        self.output_dir = output_dir

    def get(self):
        try:
            names = sorted((n for n in os.listdir(self.output_dir) if n.endswith(".png")),
                           key=lambda n: -os.stat(os.path.join(self.output_dir, n)).st_mtime)
        except OSError:
            names = []
        items = "".join('<a href="outputs/%s"><img src="outputs/%s" width="128" height="128" '
                        'alt="%s"></a>' % ((tornado.escape.xhtml_escape(n),) * 3)
                        for n in names[:200] if OUTPUT_PNG.match(n))
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish("<!doctype html><title>webui-demo gallery</title><h1>Outputs</h1>%s"
                    % (items or "<p>Nothing yet.</p>"))


def page(base_url):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "index.html")) as f:
        return f.read().replace("{{BASE_URL}}", tornado.escape.xhtml_escape(base_url))


def routes(base_url, generator, output_dir, gallery):
    # A port's base_url has no trailing slash ("/sd"): the probe and the access URL ask for
    # exactly that, and the page's relative links need the slash.
    bare = [] if base_url == "/" else [(base_url.rstrip("/"), tornado.web.RedirectHandler,
                                        {"url": base_url, "permanent": False})]
    if gallery:
        # Pictures only: the sidecars carry the prompts, which sharing a picture does not share.
        return bare + [(base_url, GalleryHandler, {"output_dir": output_dir}),
                       (base_url + r"outputs/([a-f0-9]{16}\.png)", tornado.web.StaticFileHandler,
                        {"path": output_dir})]
    out = (base_url + "outputs/(.*)", OutputHandler, {"path": output_dir})
    g = {"generator": generator}
    return bare + [
        (base_url, PageHandler, {"page": page(base_url)}),
        (base_url + "api/generate", GenerateHandler, g),
        (base_url + "api/jobs", JobsHandler, g),
        (base_url + "api/jobs/([^/]+)", JobHandler, g),
        (base_url + "ws/jobs/([^/]+)", ProgressSocket, g),
        out,
    ]


async def main():
    tornado.log.enable_pretty_logging()  # one line per request on stderr: the instance's logs
    port = int(os.environ["GPUAAS_PORT_7860"])
    proxy_token = os.environ.get("GPUAAS_PROXY_TOKEN", "")
    if not proxy_token:
        raise SystemExit("webui-demo: GPUAAS_PROXY_TOKEN is not set: run this as a gpuaas workload")
    gallery_port = os.environ.get("GPUAAS_PORT_7861")
    ip = os.environ.get("WEBUI_IP", "0.0.0.0")
    base_url = "/" + os.environ.get("WEBUI_BASE_URL", "/").strip("/")
    base_url = base_url if base_url == "/" else base_url + "/"
    output_dir = os.environ.get("WEBUI_OUTPUT_DIR", "/data/outputs")
    if not os.path.isdir(os.path.dirname(output_dir)):
        output_dir = os.path.join(os.environ.get("HOME", "/tmp"), "outputs")
    os.makedirs(output_dir, exist_ok=True)
    generator = Generator(output_dir, float(os.environ.get("WEBUI_STEP_SECONDS", "0.05")))

    tornado.web.Application(routes(base_url, generator, output_dir, False),
                            proxy_token=proxy_token).listen(port, ip)
    if gallery_port:
        tornado.web.Application(routes(base_url, generator, output_dir, True)).listen(
            int(gallery_port), ip)
    print("webui-demo: serving %s on %s:%d, outputs in %s%s" % (
        base_url, ip, port, output_dir,
        ", gallery on %s:%s" % (ip, gallery_port) if gallery_port else ""), flush=True)
    await generator.run()


if __name__ == "__main__":
    asyncio.run(main())
