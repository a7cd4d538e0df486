#!/usr/bin/env python3
"""Soak: mixed load on the release binary for a given time, sampling the server as it runs.

Starts `roost serve` on a fresh data folder, seeds `Post` objects and a few users, then runs Python
threads on keep-alive connections: reads by id, creates, random picks, pages with totals, merge
patches, deletes, 20 KB blob uploads and logins. Every few seconds it samples the server's resident
memory, threads, open descriptors, the database and WAL sizes (from the file system and from
`roost_sqlite_wal_bytes` in /metrics) and the requests answered, and prints a table row. At the end
it stops the server with SIGTERM and checks that the WAL and -shm files are gone.

Usage: python3 bench/soak.py --roost .build/release/roost --duration 600
"""
import argparse, collections, http.client, json, os, random, signal, socket, subprocess, sys, tempfile
import threading, time

OPEN_RULES = {"collections": {"*": {"rules": {"create": "public", "update": "public", "delete": "public"}}}}
PASSWORD = "soak password 123"
BLOB = random.Random(7).randbytes(20 * 1024)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    """One keep-alive connection; reconnects after an error."""

    def __init__(self, port):
        self.port = port
        self.connection = None

    def send(self, method, path, body=None, content_type="application/json"):
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {}
        if body is not None:
            headers["Content-Type"] = content_type
            if not isinstance(body, (bytes, bytearray)):
                body = json.dumps(body).encode()
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            payload = response.read()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            return response.status, payload
        except (OSError, http.client.HTTPException):
            self.close()
            return 0, b""

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Load:
    """Shared state of the load threads: known guids, counters by kind and status."""

    def __init__(self, port, guids):
        self.port = port
        self.guids = list(guids)
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.errors = collections.Counter()
        self.stop = threading.Event()

    def record(self, kind, status, expected):
        with self.lock:
            self.counts[kind] += 1
            if status not in expected:
                self.errors[f"{kind} {status}"] += 1

    def some_guid(self):
        with self.lock:
            return random.choice(self.guids) if self.guids else None

    def take_guid(self):
        with self.lock:
            if len(self.guids) < 1000:
                return None
            index = random.randrange(len(self.guids))
            self.guids[index], self.guids[-1] = self.guids[-1], self.guids[index]
            return self.guids.pop()

    def add_guid(self, guid):
        with self.lock:
            self.guids.append(guid)

    def total(self):
        with self.lock:
            return sum(self.counts.values()), sum(self.errors.values())


def post_body(n):
    return {"n": n, "gender": random.choice(["male", "female"]), "text": "soak " * 20}


# A deleted object may still be picked by a reader or a patcher: 404 is expected there.
def reader(load, client):
    guid = load.some_guid()
    status, _ = client.send("GET", f"/ff/resources/Post/{guid}")
    load.record("read by id", status, (200, 404))


def creator(load, client):
    status, payload = client.send("POST", "/ff/resources/Post", post_body(random.randrange(10**6)))
    load.record("create", status, (201,))
    if status == 201:
        load.add_guid(json.loads(payload)["guid"])


def picker(load, client):
    status, _ = client.send("GET", "/ff/resources/Post/(gender%20eq%20'male'%20and%20guid%20eq%20random(guid))")
    load.record("random pick", status, (200,))


def pager(load, client):
    start = random.randrange(0, 500)
    status, _ = client.send("GET", f"/ff/resources/Post?sort=createdAt%20desc&count=20&start={start}&total=true")
    load.record("page with total", status, (200,))


def patcher(load, client):
    guid = load.some_guid()
    status, _ = client.send("PATCH", f"/ff/resources/Post/{guid}", {"n": random.randrange(10**6)})
    load.record("patch", status, (200, 404))


def deleter(load, client):
    guid = load.take_guid()
    if guid is None:
        time.sleep(0.05)
        return
    status, _ = client.send("DELETE", f"/ff/resources/Post/{guid}")
    load.record("delete", status, (204, 404))


def uploader(load, client):
    guid = load.some_guid()
    status, _ = client.send("PUT", f"/ff/resources/Post/{guid}/data", BLOB, "application/octet-stream")
    load.record("upload 20 KB", status, (200, 404))


def login(load, client):
    status, _ = client.send("POST", "/ff/login", {"userName": f"soak{random.randrange(4)}", "password": PASSWORD})
    load.record("login", status, (200,))


def worker(load, action):
    client = Client(load.port)
    while not load.stop.is_set():
        action(load, client)
    client.close()


def sample(pid, data, port):
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""

    status = read(f"/proc/{pid}/status")
    rss = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
    threads = len(os.listdir(f"/proc/{pid}/task"))
    descriptors = len(os.listdir(f"/proc/{pid}/fd"))
    database = os.path.join(data, "roost.sqlite")
    size = lambda p: os.path.getsize(p) if os.path.exists(p) else 0
    gauge = -1
    code, payload = Client(port).send("GET", "/metrics")
    if code == 200:
        for line in payload.decode().splitlines():
            if line.startswith("roost_sqlite_wal_bytes "):
                gauge = int(line.split()[1])
    return rss, threads, descriptors, size(database), size(database + "-wal"), gauge


def mib(value):
    return f"{value / 1048576:8.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", default=".build/release/roost")
    parser.add_argument("--duration", type=float, default=600, help="seconds of load (default 600)")
    parser.add_argument("--interval", type=float, default=5, help="seconds between samples (default 5)")
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--creators", type=int, default=10)
    parser.add_argument("--seed", type=int, default=2000, help="objects created before the load")
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="roost-soak-")
    data = os.path.join(tmp, "data")
    app = os.path.join(tmp, "roost.json")
    with open(app, "w") as f:
        json.dump(OPEN_RULES, f)
    port = free_port()
    log = open(os.path.join(tmp, "server.log"), "w")
    server = subprocess.Popen(
        [args.roost, "serve", "--port", str(port), "--data-dir", data, "--app", app, "--access-log", "off",
         "--metrics-allow", "127.0.0.1"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 30
        while Client(port).send("GET", "/health")[0] != 200:
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start; see " + log.name)
            time.sleep(0.1)
        seeder = Client(port)
        guids = []
        for n in range(args.seed):
            code, payload = seeder.send("POST", "/ff/resources/Post", post_body(n))
            if code != 201:
                raise SystemExit(f"seeding failed: {code} {payload[:200]!r}")
            guids.append(json.loads(payload)["guid"])
        for n in range(4):
            seeder.send("POST", "/ff/register", {"userName": f"soak{n}", "password": PASSWORD})
        load = Load(port, guids)
        plan = ([reader] * args.readers + [creator] * args.creators
                + [picker, picker, pager, pager, patcher, patcher, deleter, uploader, login])
        threads = [threading.Thread(target=worker, args=(load, action), daemon=True) for action in plan]
        print(f"soak: {len(threads)} connections for {args.duration:.0f} s on roost pid {server.pid} "
              f"(data {data})", flush=True)
        print(f"{'time s':>7} {'req/s':>8} {'errors':>7} {'RSS MiB':>8} {'threads':>7} {'fds':>5} "
              f"{'db MiB':>8} {'WAL MiB':>8} {'gauge MiB':>9}", flush=True)
        started = time.time()
        for thread in threads:
            thread.start()
        last_total, last_time = 0, started
        peak_wal = 0
        rows = []
        while time.time() - started < args.duration:
            time.sleep(min(args.interval, max(0.0, args.duration - (time.time() - started))))
            now = time.time()
            total, errors = load.total()
            rss, nthreads, fds, db, wal, gauge = sample(server.pid, data, port)
            peak_wal = max(peak_wal, wal)
            rate = (total - last_total) / (now - last_time)
            last_total, last_time = total, now
            rows.append((rss, nthreads, fds))
            print(f"{now - started:7.0f} {rate:8.0f} {errors:7d} {rss / 1024:8.1f} {nthreads:7d} {fds:5d} "
                  f"{mib(db)} {mib(wal)} {mib(gauge):>9}", flush=True)
        load.stop.set()
        for thread in threads:
            thread.join(timeout=70)
        elapsed = time.time() - started
        total, errors = load.total()
        print(f"\n{total:,} requests in {elapsed:.0f} s ({total / elapsed:.0f}/s), {errors} unexpected answers; "
              f"peak WAL {peak_wal / 1048576:.1f} MiB", flush=True)
        for kind, count in sorted(load.counts.items()):
            print(f"  {kind:16} {count:>10,}")
        for kind, count in sorted(load.errors.items()):
            print(f"  unexpected: {kind} x{count}")
        if rows:
            rss = [r[0] for r in rows]
            print(f"RSS {min(rss) / 1024:.1f}-{max(rss) / 1024:.1f} MiB; threads {min(r[1] for r in rows)}-"
                  f"{max(r[1] for r in rows)}; descriptors {min(r[2] for r in rows)}-{max(r[2] for r in rows)}")
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                code = server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                code = "killed after 60 s"
            left = [name for name in ("roost.sqlite-wal", "roost.sqlite-shm") if os.path.exists(os.path.join(data, name))]
            print(f"SIGTERM: exit status {code}; left behind: {', '.join(left) or 'nothing'}")
        log.close()


if __name__ == "__main__":
    main()
