#!/usr/bin/env python3
"""Two Roost binaries on the same scenarios, interleaved, to tell a change's cost from noise.

    python3 bench/compare.py --before OLD/roost --after .build/release/roost [--rounds 3] [--duration 5]

Each binary gets a fresh data folder with the same posts; the scenarios (GET by id, a page of 20,
a filtered page, a random pick, an authenticated create, at 50 connections) then run in rounds,
before and after taking turns, so that whatever else the machine does falls on both alike. Prints
the median requests/s of each and the ratio.
"""
import argparse, os, shutil, signal, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import call, lua_get, lua_static, run_wrk, seed, start_roost  # noqa: E402


def prepare(binary, tmp, objects):
    os.makedirs(tmp)
    proc, port, token = start_roost(binary, tmp)
    auth = {"Authorization": f"Bearer {token}"}
    ids = seed(port, "/ff/resources/Post", objects, headers=auth)
    # The index through the app definition works on both sides of a change to `index create`.
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    subprocess.run([binary, "index", "create", "Post", "gender", "--data-dir", os.path.join(tmp, "roost-data")],
                   check=True, capture_output=True)
    proc, port, _ = restart(binary, tmp)
    post = {"content": "a new post from wrk", "gender": "female", "author": "wrk"}
    scenarios = {
        "GET by id": lua_get(tmp, "get", "/ff/resources/Post/", ids),
        "page of 20": lua_static(tmp, "list", "GET", "/ff/resources/Post?sort=createdAt%20desc&count=20"),
        "filtered page of 20": lua_static(tmp, "filter", "GET", "/ff/resources/Post/(gender%20eq%20%27male%27)?count=20"),
        "random pick": lua_static(tmp, "random", "GET",
                                  "/ff/resources/Post/(gender%20eq%20%27male%27%20and%20guid%20eq%20random(guid))"),
        "create (logged in)": lua_static(tmp, "create", "POST", "/ff/resources/Post", post, auth),
    }
    return proc, port, scenarios


def restart(binary, tmp):
    """Starts the binary again on its data folder; the bench user already exists."""
    import bench
    port = bench.free_port()
    log = open(os.path.join(tmp, "roost.log"), "a")
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(tmp, "roost-data"),
                             "--app", os.path.join(tmp, "roost.json")], stdout=log, stderr=log)
    bench.wait_for(port, "/health")
    return proc, port, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--only", help="run only the scenarios whose names contain this text")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="roost-compare-")
    servers = {}
    try:
        for name, binary in (("before", args.before), ("after", args.after)):
            print(f"{name}: starting and seeding ...", file=sys.stderr, flush=True)
            servers[name] = prepare(binary, os.path.join(tmp, name), args.objects)
        results = {}
        for round_number in range(args.rounds):
            for scenario in [name for name in servers["before"][2] if not args.only or args.only in name]:
                order = ("before", "after") if round_number % 2 == 0 else ("after", "before")
                for name in order:
                    _, port, scenarios = servers[name]
                    print(f"  round {round_number + 1}: {scenario}, {name} ...", file=sys.stderr, flush=True)
                    outcome = run_wrk(f"http://127.0.0.1:{port}/", scenarios[scenario], 50, args.duration)
                    results.setdefault((scenario, name), []).append(outcome["rps"])
        print("| scenario (50 connections) | before req/s | after req/s | after / before |")
        print("|---|---|---|---|")
        for scenario in [name for name in servers["before"][2] if (name, "before") in results]:
            before = statistics.median(results[(scenario, "before")])
            after = statistics.median(results[(scenario, "after")])
            print(f"| {scenario} | {before:.0f} | {after:.0f} | {after / before:.2f}× |")
    finally:
        for proc, _, _ in servers.values():
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
