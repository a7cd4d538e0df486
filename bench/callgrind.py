#!/usr/bin/env python3
"""Instructions per request for GET by id, counted by valgrind's callgrind: repeatable whatever
else the machine is doing, unlike requests per second on a shared 2-core machine.

    python3 bench/callgrind.py BINARY [BINARY ...] [--requests 2000]

Each binary serves a fresh data folder under callgrind with instrumentation off; one object is
created, then instrumentation is switched on for exactly N keep-alive GETs of it and off again,
and the instructions counted in between are divided by N. Startup, registration and shutdown are
not counted. Prints one line per binary.
"""
import argparse, glob, http.client, json, os, re, socket, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(connection, method, path, body=None, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    data = response.read()
    return response.status, data


def measure(binary, requests):
    tmp = tempfile.mkdtemp(prefix="roost-callgrind-")
    port = free_port()
    out = os.path.join(tmp, "callgrind.out")
    log = open(os.path.join(tmp, "server.log"), "w")
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
         binary, "serve", "--port", str(port), "--data-dir", os.path.join(tmp, "data")],
        stdout=log, stderr=log)
    try:
        deadline = time.time() + 300
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                if call(connection, "GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit(f"{binary} did not come up under valgrind; see {tmp}/server.log")
            time.sleep(0.5)
        status, body = call(connection, "POST", "/ff/register", {"userName": "bench", "password": "benchpassword123"})
        token = json.loads(body)["token"]
        status, body = call(connection, "POST", "/ff/resources/Post", {"guid": "p1", "text": "hello", "gender": "f"}, token)
        assert status == 201, body
        for _ in range(50):  # warm the path once before counting
            call(connection, "GET", "/ff/resources/Post/p1", token=token)
        subprocess.run(["callgrind_control", "-i", "on", str(server.pid)], check=True, capture_output=True)
        for _ in range(requests):
            status, _ = call(connection, "GET", "/ff/resources/Post/p1", token=token)
            assert status == 200
        subprocess.run(["callgrind_control", "-i", "off", str(server.pid)], check=True, capture_output=True)
        subprocess.run(["callgrind_control", "-d", str(server.pid)], check=True, capture_output=True)
    finally:
        server.terminate()
        server.wait(timeout=120)
    total = 0
    for path in glob.glob(out + "*"):
        with open(path) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total += int(line.split()[1])
                    break
    return total / requests


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binaries", nargs="+")
    parser.add_argument("--requests", type=int, default=2000)
    arguments = parser.parse_args()
    for binary in arguments.binaries:
        print(f"{binary}: {measure(binary, arguments.requests):,.0f} instructions per GET by id "
              f"({arguments.requests} keep-alive requests)", flush=True)


if __name__ == "__main__":
    main()
