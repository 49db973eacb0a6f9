#!/usr/bin/python3
"""Queues one generation job on a webui-demo and follows its progress over the WebSocket.

POST /api/generate, then /ws/jobs/<id> until the job ends, then GET /api/jobs/<id>. Prints one
JSON object:
  {"job_id": ..., "states": [...every state seen...], "steps": [...every step seen...],
   "final": <the last WebSocket message>, "job": <GET /api/jobs/<id>>}
and exits 0 when the job finished "done".

Where the server is and how to reach it are parameters, so the same client goes straight to
the workload's host port or through the access proxy:
  webui_generate.py --base-url http://127.0.0.1:PORT [--host ID-7860.gpuaas.localhost]
                    [--header 'Authorization: Bearer T'] --prompt P --steps N
"""
import argparse
import json
import sys
import time

import requests
import websocket


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--base-url", required=True, help="the WebUI's URL including its base_url")
    p.add_argument("--host", help="the Host header to send (a proxy routes on it)")
    p.add_argument("--header", action="append", default=[],
                   help="an extra 'Name: value' header for every request, repeatable")
    p.add_argument("--prompt", required=True)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--timeout", type=float, default=60, help="seconds for the whole run")
    return p.parse_args()


def main():
    args = parse_args()
    deadline = time.monotonic() + args.timeout
    base = args.base_url.rstrip("/")
    headers = {}
    for h in args.header:
        name, _, value = h.partition(":")
        headers[name.strip()] = value.strip()
    if args.host:
        headers["Host"] = args.host

    r = requests.post(base + "/api/generate", json={"prompt": args.prompt, "steps": args.steps},
                      headers=headers, timeout=args.timeout)
    r.raise_for_status()
    job_id = r.json()["job_id"]

    ws = websocket.create_connection(
        "ws" + base[len("http"):] + "/ws/jobs/" + job_id, timeout=args.timeout,
        host=headers.get("Host"),
        header=["%s: %s" % (k, v) for k, v in headers.items() if k != "Host"])
    states, steps, final = [], [], None
    try:
        while final is None or final["state"] not in ("done", "failed"):
            ws.settimeout(max(0.1, deadline - time.monotonic()))
            final = json.loads(ws.recv())
            if not states or states[-1] != final["state"]:
                states.append(final["state"])
            steps.append(final["step"])
    finally:
        ws.close()

    job = requests.get(base + "/api/jobs/" + job_id, headers=headers, timeout=args.timeout).json()
    print(json.dumps({"job_id": job_id, "states": states, "steps": steps, "final": final,
                      "job": job}))
    return 0 if final["state"] == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
