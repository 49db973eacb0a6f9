#!/usr/bin/python3
"""Runs Python code in a new kernel of a Jupyter server, the way a notebook does.

Over Jupyter's REST API it starts a kernel (POST /api/kernels), then over the kernel's
WebSocket (/api/kernels/<id>/channels, the Jupyter messaging protocol) sends an execute_request
on the shell channel and collects the cell's output from iopub until the kernel is idle again;
then it shuts the kernel down. It prints one JSON object:
  {"status": "ok"|"error", "result": <text/plain of execute_result or "">, "stdout": ..., "error": ...}
and exits 0 when the cell ran without error.

Where the server is and how to reach it are parameters, so the same client goes straight to
the workload's host port or through the access proxy:
  jupyter_exec.py --base-url http://127.0.0.1:PORT [--host ID-8888.gpuaas.localhost]
                  [--header 'Authorization: Bearer T'] CODE
"""
import argparse
import json
import sys
import time
import uuid

import requests
import websocket


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base-url", required=True,
                   help="the server's URL including its base_url, e.g. http://127.0.0.1:8888/")
    p.add_argument("--host", help="the Host header to send (a proxy routes on it)")
    p.add_argument("--header", action="append", default=[],
                   help="an extra 'Name: value' header for every request, repeatable")
    p.add_argument("--timeout", type=float, default=60, help="seconds for the whole run")
    p.add_argument("code", help="the cell to run")
    return p.parse_args()


def headers_of(args):
    headers = {}
    for h in args.header:
        name, _, value = h.partition(":")
        headers[name.strip()] = value.strip()
    if args.host:
        headers["Host"] = args.host
    return headers


def message(msg_type, content, session):
    return {
        "header": {"msg_id": uuid.uuid4().hex, "msg_type": msg_type, "username": "gpuaas-test",
                   "session": session, "date": "", "version": "5.3"},
        "parent_header": {},
        "metadata": {},
        "content": content,
        "channel": "shell",
    }


def run_cell(ws, code, deadline):
    """Sends `code` and reads iopub until this request's status goes back to idle."""
    session = uuid.uuid4().hex
    request = message("execute_request", {"code": code, "silent": False, "store_history": True,
                                          "user_expressions": {}, "allow_stdin": False,
                                          "stop_on_error": True}, session)
    ws.send(json.dumps(request))
    out = {"status": "ok", "result": "", "stdout": "", "error": ""}
    replied = idle = False
    while not (replied and idle):
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != request["header"]["msg_id"]:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "execute_result":
            out["result"] = content["data"].get("text/plain", "")
        elif kind == "stream" and content.get("name") == "stdout":
            out["stdout"] += content["text"]
        elif kind == "error":
            out["status"] = "error"
            out["error"] = "%s: %s" % (content.get("ename"), content.get("evalue"))
        elif kind == "execute_reply":
            replied = True
            if content.get("status") != "ok":
                out["status"] = "error"
        elif kind == "status" and content.get("execution_state") == "idle":
            idle = True
    return out


def main():
    args = parse_args()
    deadline = time.monotonic() + args.timeout
    base = args.base_url.rstrip("/")
    headers = headers_of(args)
    http = requests.Session()
    http.headers.update(headers)

    r = http.post(base + "/api/kernels", json={"name": "python3"}, timeout=args.timeout)
    r.raise_for_status()
    kernel_id = r.json()["id"]
    try:
        ws_url = "ws" + base[len("http"):] + "/api/kernels/%s/channels" % kernel_id
        ws = websocket.create_connection(
            ws_url, timeout=args.timeout, host=headers.get("Host"),
            header=["%s: %s" % (k, v) for k, v in headers.items() if k != "Host"])
        try:
            out = run_cell(ws, args.code, deadline)
        finally:
            ws.close()
    finally:
        http.delete(base + "/api/kernels/" + kernel_id, timeout=args.timeout)
    print(json.dumps(out))
    return 0 if out["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
