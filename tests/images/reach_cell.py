# A notebook cell the tests run in a Jupyter workload (jupyter_exec.py) to see what it reaches:
# TARGETS, a Python list of (address, port), is put in by the caller. It prints "reached [...]"
# with every target a TCP connection got through to. The workload's own Jupyter must answer
# first, so a refusal below is the network's, not a workload without one.
import socket

socket.create_connection(("127.0.0.1", 8888), timeout=2).close()
reached = []
for target in TARGETS:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(target)
        reached.append(target)
    except OSError:
        pass
    s.close()
print("reached", reached)
