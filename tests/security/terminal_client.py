#!/usr/bin/python3
"""A terminal WebSocket (/v1/instances/ID/exec) opened as an outsider would: with a bearer token
or a session cookie, from any Origin. Types KEYS, reads until the session ends (or 20 s), and
prints one JSON line: {"status": 101 or the refused handshake's HTTP status, "output": what the
terminal showed, "texts": the JSON text frames}.

  terminal_client.py URL [--token T] [--cookie NAME=VALUE] [--origin O] [--keys K]
"""
import argparse
import json
import time

import websocket


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--token")
    p.add_argument("--cookie")
    p.add_argument("--origin")
    p.add_argument("--keys", default="")
    a = p.parse_args()
    headers = [f"Authorization: Bearer {a.token}"] if a.token else []
    result = {"status": 0, "output": "", "texts": []}
    try:
        ws = websocket.create_connection(a.url, header=headers, cookie=a.cookie, origin=a.origin,
                                         timeout=20, suppress_origin=a.origin is None)
    except websocket.WebSocketBadStatusException as e:
        result["status"] = e.status_code
        print(json.dumps(result))
        return
    result["status"] = 101
    if a.keys:
        ws.send_binary(a.keys.encode())
    output = b""
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            op, data = ws.recv_data()
        except Exception:  # the server closed, or the time ran out
            break
        if op == websocket.ABNF.OPCODE_BINARY:
            output += data
        elif op == websocket.ABNF.OPCODE_TEXT:
            result["texts"].append(json.loads(data))
        elif op == websocket.ABNF.OPCODE_CLOSE:
            break
    result["output"] = output.decode(errors="replace")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
