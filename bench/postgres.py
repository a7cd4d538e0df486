#!/usr/bin/env python3
"""Roost on SQLite, Roost on PostgreSQL (one instance, then two on one database) and PocketBase, on
the same machine, data and scenarios, in one run (issue 15).

PostgreSQL runs in a private cluster this script starts (scripts/postgres-test-cluster.sh, with
fsync on and synchronous_commit off: durable against a crash of the server process, like SQLite's
WAL with synchronous=NORMAL, which can lose the last commits on a power cut). Each server gets the
same 10,000 posts; wrk runs GET by id, a filtered page of 20 and an authenticated create at 50
connections and at 1. Two instances: two wrk processes at once, 25 connections each, one per
instance; their rates add up. Replaces the "## PostgreSQL" section of bench/RESULTS.md.
"""
import argparse, datetime, os, shutil, signal, subprocess, sys, tempfile, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the shared helpers: seeding, wrk, PocketBase)

ROOT = os.path.dirname(bench.HERE)
CLUSTER = os.path.join(ROOT, "scripts", "postgres-test-cluster.sh")


def start_cluster(folder):
    url = subprocess.run([CLUSTER, "start", folder], capture_output=True, text=True, check=True).stdout.strip()
    # The test cluster turns fsync off for speed; a benchmark must not.
    conf = os.path.join(folder, "data", "postgresql.auto.conf")
    with open(conf, "a") as f:
        f.write("fsync = on\nsynchronous_commit = off\nfull_page_writes = on\nshared_buffers = '256MB'\n")
    subprocess.run([CLUSTER, "halt", folder], check=True)
    return subprocess.run([CLUSTER, "start", folder], capture_output=True, text=True, check=True).stdout.strip()


def start_roost(binary, tmp, name, database=None):
    port = bench.free_port()
    data = os.path.join(tmp, f"{name}-data")
    app = os.path.join(tmp, f"{name}.json")
    with open(app, "w") as f:
        bench.json.dump({"collections": {"Post": {"indexes": ["gender"]}}}, f)
    command = [binary, "serve", "--port", str(port), "--data-dir", data, "--app", app]
    env = dict(os.environ)
    if database:
        env["ROOST_DATABASE_URL"] = database
    log = open(os.path.join(tmp, f"{name}.log"), "w")
    proc = subprocess.Popen(command, stdout=log, stderr=log, env=env)
    bench.wait_for(port, "/health")
    return proc, port


def roost_scenarios(tmp, name, ids, auth, post):
    return {
        "GET by id": bench.lua_get(tmp, f"{name}-get", "/ff/resources/Post/", ids),
        "filtered page of 20": bench.lua_static(tmp, f"{name}-filter", "GET", "/ff/resources/Post/(gender%20eq%20%27male%27)?count=20"),
        "create (logged in)": bench.lua_static(tmp, f"{name}-create", "POST", "/ff/resources/Post", post, auth),
    }


def measure(name, port, scenarios, duration):
    results = {}
    for scenario, script in scenarios.items():
        for connections in (50, 1):
            print(f"  {name}: {scenario}, {connections} connection(s) ...", file=sys.stderr, flush=True)
            results[(scenario, connections)] = bench.run_wrk(
                f"http://127.0.0.1:{port}/", script, connections, duration if connections == 50 else max(3, duration // 2))
    return results


def measure_pair(ports, scenarios, duration):
    """Both instances at once, 25 connections each; the rates add up, latencies are the worse."""
    results = {}
    for scenario in ("GET by id", "filtered page of 20", "create (logged in)"):
        print(f"  two instances: {scenario} ...", file=sys.stderr, flush=True)
        outcome = [None, None]

        def run(index):
            outcome[index] = bench.run_wrk(f"http://127.0.0.1:{ports[index]}/", scenarios[index][scenario], 25, duration)

        threads = [threading.Thread(target=run, args=(i,)) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results[scenario] = {"rps": outcome[0]["rps"] + outcome[1]["rps"],
                             "p50": max(outcome[0]["p50"], outcome[1]["p50"]),
                             "p99": max(outcome[0]["p99"], outcome[1]["p99"]),
                             "errors": outcome[0]["errors"] + outcome[1]["errors"]}
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", required=True)
    parser.add_argument("--pocketbase", required=True)
    parser.add_argument("--duration", type=int, default=8)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--results", default=os.path.join(bench.HERE, "RESULTS.md"))
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="roost-bench-pg-")
    # A folder of its own, not inside tmp (0700): the cluster's owner must reach it.
    cluster = tempfile.mkdtemp(prefix="roost-bench-cluster-")
    post = {"content": "a new post from wrk", "gender": "female", "author": "wrk"}
    procs = []
    results = {}
    try:
        url = start_cluster(cluster)
        for name, database in (("sqlite", None), ("postgres", url)):
            print(f"Roost on {name}: starting and seeding ...", file=sys.stderr, flush=True)
            proc, port = start_roost(args.roost, tmp, name, database)
            procs.append(proc)
            token = bench.call(port, "POST", "/ff/register", {"userName": "bench", "password": "benchpassword123"})["token"]
            auth = {"Authorization": f"Bearer {token}"}
            ids = bench.seed(port, "/ff/resources/Post", args.objects, headers=auth)
            if database:
                # Autovacuum would gather the planner's statistics within a minute of the seeding;
                # the measurement should not depend on whether it has yet.
                subprocess.run(["psql", database, "-qc", "ANALYZE"], check=True)
            results[name] = measure(f"Roost/{name}", port, roost_scenarios(tmp, name, ids, auth, post), args.duration)
            results[name]["rss"] = bench.peak_rss_mib(proc.pid)
            if database:
                # A second instance on the same database, then both at once.
                print("Roost on postgres: a second instance ...", file=sys.stderr, flush=True)
                second, second_port = start_roost(args.roost, tmp, "postgres-2", database)
                procs.append(second)
                first_alone = bench.run_wrk(f"http://127.0.0.1:{port}/", roost_scenarios(tmp, "pg1", ids, auth, post)["GET by id"], 50, args.duration)
                results["pair"] = measure_pair(
                    [port, second_port],
                    [roost_scenarios(tmp, "pg-a", ids, auth, post), roost_scenarios(tmp, "pg-b", ids, auth, post)],
                    args.duration)
                results["pair"]["one alone"] = first_alone
                second.send_signal(signal.SIGTERM)
                second.wait(30)
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        print("PocketBase: starting and seeding ...", file=sys.stderr, flush=True)
        proc, port, token, _ = bench.start_pocketbase(args.pocketbase, tmp)
        procs.append(proc)
        auth = {"Authorization": token}
        ids = bench.seed(port, "/api/collections/posts/records", args.objects, headers=auth, id_field="id")
        results["pocketbase"] = measure("PocketBase", port, {
            "GET by id": bench.lua_get(tmp, "pb-get", "/api/collections/posts/records/", ids),
            "filtered page of 20": bench.lua_static(tmp, "pb-filter", "GET", "/api/collections/posts/records?filter=(gender=%27male%27)&perPage=20&skipTotal=1"),
            "create (logged in)": bench.lua_static(tmp, "pb-create", "POST", "/api/collections/posts/records", post, auth),
        }, args.duration)
        results["pocketbase"]["rss"] = bench.peak_rss_mib(proc.pid)
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
        subprocess.run([CLUSTER, "stop", cluster], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(cluster, ignore_errors=True)

    sqlite, postgres, pocketbase, pair = results["sqlite"], results["postgres"], results["pocketbase"], results["pair"]
    rows = ["| scenario | conns | Roost/SQLite req/s | Roost/PostgreSQL req/s | PocketBase req/s | PostgreSQL ÷ PB | Roost/PostgreSQL p50 / p99 ms | PocketBase p50 / p99 ms |",
            "|---|---|---|---|---|---|---|---|"]
    for key in sqlite:
        if not isinstance(key, tuple):
            continue
        s, p, b = sqlite[key], postgres[key], pocketbase[key]
        rows.append(f"| {key[0]} | {key[1]} | {s['rps']:.0f} | {p['rps']:.0f} | {b['rps']:.0f} | **{p['rps'] / b['rps']:.2f}×** | "
                    f"{p['p50']:.2f} / {p['p99']:.2f} | {b['p50']:.2f} / {b['p99']:.2f} |")
    rows.append(f"| peak RSS (MiB) | | {sqlite['rss']:.1f} | {postgres['rss']:.1f} (Roost only) | {pocketbase['rss']:.1f} | | | |")
    pair_rows = ["| scenario (50 connections in all) | one instance req/s | two instances req/s | two ÷ one | two: worst p50 / p99 ms |",
                 "|---|---|---|---|---|"]
    for scenario in ("GET by id", "filtered page of 20", "create (logged in)"):
        one = postgres[(scenario, 50)]
        two = pair[scenario]
        pair_rows.append(f"| {scenario} | {one['rps']:.0f} | {two['rps']:.0f} | **{two['rps'] / one['rps']:.2f}×** | {two['p50']:.2f} / {two['p99']:.2f} |")
    section = f"""## PostgreSQL

Written by `bench/postgres.py` on {datetime.date.today().isoformat()}, same machine. PostgreSQL
{subprocess.run(['psql', '--version'], capture_output=True, text=True).stdout.split()[2]} in a private cluster on a Unix socket,
fsync on, synchronous_commit off, shared_buffers 256MB, `ANALYZE` after the seeding; Roost's default
8 connections per instance.
{args.objects} posts each; wrk {args.duration} s at 50 connections, {max(3, args.duration // 2)} s at 1. Every server,
PostgreSQL and wrk share the machine's {os.cpu_count()} cores.

{chr(10).join(rows)}

Two Roost instances on one PostgreSQL database, each driven by its own wrk at 25 connections, against
one instance at 50:

{chr(10).join(pair_rows)}

On {os.cpu_count()} cores a second instance adds no cores: the instances, PostgreSQL and wrk all
share them, so two instances can at best match one. What a second instance buys here is availability
(one can die, `SharedDatabaseFailureTests`); throughput scales when each instance has cores of its own
and PostgreSQL has spare: on paper, a read-heavy load needs per instance about as many cores as one
instance saturates here, and PostgreSQL about one core per two to three instances' worth of reads
(the page and query scenarios cost PostgreSQL more than GET by id). Creates across instances commit
their change-log entries one at a time (the counter row, see the README), so they do not scale with
instances.
"""
    print(section)
    old = open(args.results).read() if os.path.exists(args.results) else "# Benchmark results\n"
    if "## PostgreSQL" in old:
        before, after = old.split("## PostgreSQL", 1)
        rest = after.split("\n## ", 1)
        old = before + (("## " + rest[1]) if len(rest) > 1 else "")
    with open(args.results, "w") as f:
        f.write(old.rstrip() + "\n\n" + section)


if __name__ == "__main__":
    main()
