#!/usr/bin/env python3
"""One million Post objects: an indexed equality query page at one connection.

Builds the data folder with SQLite directly (the same rows the server writes, through the schema
`roost` creates), indexes `gender` with `roost index create`, starts the server and measures
`/ff/resources/Post/(gender eq 'male')?count=20` with wrk at 1 connection, then the admin dashboard's
reads (issue 30: the collections list, a first and a deep page by cursor, the page itself) as an
administrator. Appends its section to
bench/RESULTS.md. Usage: python3 bench/million.py --roost .build/release/roost [--objects 1000000]
"""
import argparse, datetime, json, os, random, re, shutil, sqlite3, string, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import call, free_port, wait_for, run_wrk, lua_static  # noqa: E402

SECTION = "## One million objects"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", required=True)
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md"))
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="roost-million-")
    data = os.path.join(tmp, "data")
    try:
        # The server makes the schema (admin commands refuse a folder that holds no database).
        port = free_port()
        proc = subprocess.Popen([args.roost, "serve", "--port", str(port), "--data-dir", data],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(port, "/health")
        proc.terminate()
        proc.wait(30)
        db = sqlite3.connect(os.path.join(data, "roost.sqlite"))
        db.execute("PRAGMA synchronous = OFF")
        started = time.time()
        alphabet = string.ascii_lowercase + "234567"
        now = int(time.time() * 1000)
        batch = []
        for i in range(args.objects):
            guid = "".join(random.choice(alphabet) for _ in range(26))
            document = {"guid": guid, "ffUrl": f"/ff/resources/Post/{guid}", "createdBy": None, "createdAt": now + i,
                        "updatedBy": None, "updatedAt": now + i, "version": 1,
                        "content": f"post number {i} " + "lorem ipsum " * 4,
                        "gender": "male" if i % 2 == 0 else "female", "author": f"user{i % 997}"}
            batch.append(("Post", guid, json.dumps(document, separators=(",", ":")), now + i, now + i))
            if len(batch) == 50_000:
                db.executemany("INSERT INTO objects (collection, guid, document, created_at, updated_at, version) "
                               "VALUES (?, ?, ?, ?, ?, 1)", batch)
                db.commit()
                batch = []
                print(f"\r  inserted {i + 1:,} of {args.objects:,}", end="", file=sys.stderr, flush=True)
        if batch:
            db.executemany("INSERT INTO objects (collection, guid, document, created_at, updated_at, version) "
                           "VALUES (?, ?, ?, ?, ?, 1)", batch)
            db.commit()
        db.close()
        print(f"\n  seeded in {time.time() - started:.0f} s", file=sys.stderr)
        started = time.time()
        subprocess.run([args.roost, "index", "create", "Post", "gender", "--data-dir", data], check=True)
        index_seconds = time.time() - started
        subprocess.run([args.roost, "users", "create", "bench-admin", "--admin", "--password-stdin", "--data-dir", data],
                       input="bench-admin-password\n", text=True, check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        log = open(os.path.join(tmp, "roost.log"), "w")
        proc = subprocess.Popen([args.roost, "serve", "--port", str(port), "--data-dir", data], stdout=log, stderr=log)
        wait_for(port, "/health")
        query = lua_static(tmp, "million", "GET", "/ff/resources/Post/(gender%20eq%20%27male%27)?count=20")
        result = run_wrk(f"http://127.0.0.1:{port}/", query, 1, 10)
        random_pick = lua_static(tmp, "million-random", "GET",
                                 "/ff/resources/Post/(gender%20eq%20%27male%27%20and%20guid%20eq%20random(guid))")
        picked = run_wrk(f"http://127.0.0.1:{port}/", random_pick, 1, 10)
        token = call(port, "POST", "/ff/login", {"userName": "bench-admin", "password": "bench-admin-password"})["token"]
        admin = {"X-Token": token}
        # A cursor near the end: the position of the object 90% of the way in, in base 36.
        position, digits = int(args.objects * 0.9), ""
        while position:
            digits, position = "0123456789abcdefghijklmnopqrstuvwxyz"[position % 36] + digits, position // 36
        dashboard = []
        for label, path in [("`GET /ff/admin/collections`", "/ff/admin/collections"),
                            ("`…/collections/Post/objects?limit=50`", "/ff/admin/collections/Post/objects?limit=50"),
                            ("the same 90% of the way in (`after=`)",
                             f"/ff/admin/collections/Post/objects?limit=50&after=o{digits or '0'}"),
                            ("`GET /_/` (the page)", "/_/")]:
            script = lua_static(tmp, "million-dashboard-%d" % len(dashboard), "GET", path, headers=admin)
            dashboard.append((label, run_wrk(f"http://127.0.0.1:{port}/", script, 1, 10)))
        proc.terminate()
        proc.wait(30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = (f"{SECTION}\n\nWritten by `bench/million.py` on {datetime.date.today().isoformat()}: {args.objects:,} posts, "
            f"`roost index create Post gender` took {index_seconds:.1f} s; wrk at 1 connection for 10 s.\n\n"
            "| query | req/s | p50 ms | p99 ms |\n|---|---|---|---|\n"
            f"| `(gender eq 'male')?count=20` | {result['rps']:.0f} | {result['p50']:.2f} | {result['p99']:.2f} |\n"
            f"| `(gender eq 'male' and guid eq random(guid))` | {picked['rps']:.0f} | {picked['p50']:.2f} | {picked['p99']:.2f} |\n\n"
            "Target (issue 4): the indexed equality page under 2 ms p50 at one connection.\n\n"
            "The admin dashboard's reads on the same data, as an administrator:\n\n"
            "| read | req/s | p50 ms | p99 ms |\n|---|---|---|---|\n"
            + "".join(f"| {label} | {r['rps']:.0f} | {r['p50']:.2f} | {r['p99']:.2f} |\n" for label, r in dashboard)
            + "\nTarget (issue 30): every dashboard page under 100 ms of server time.\n")
    print(text)
    existing = open(args.results).read() if os.path.exists(args.results) else ""
    head = existing.split(SECTION)[0].rstrip() + "\n\n" if existing else ""
    with open(args.results, "w") as f:
        f.write(head + text)


if __name__ == "__main__":
    main()
