#!/usr/bin/env python3
"""Server-side scripts (issue 19): logged-in creates with no handler, against the same creates with a
POST handler that reads and updates one other object (a vote counter, as FatFractal's WouldYa does),
on one Roost (SQLite) in one run. Target: with the handler, at least half the rate without.
With --pocketbase, PocketBase in the same run: the same creates without a hook, and with a JS hook
(pb_hooks, onRecordAfterCreateSuccess, which runs before the answer) doing the same counting.

Each create names one of 100 counters at random, so the handler's update is not one hot object all
50 connections fight over. Replaces the "## Server-side scripts" section of bench/RESULTS.md.
"""
import argparse, datetime, os, re, signal, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the shared helpers: wrk, seeding)

WORKERS = []

HANDLER = """var ff = require('ffef/FatFractal');
exports.count = function () {
    var vote = ff.getEventHandlerData();
    var counter = ff.getObjFromUrl('/ff/resources/Counter/' + vote.counter);
    counter.votes = (counter.votes || 0) + 1;
    ff.updateObj(counter);
};
"""


def start(binary, tmp, name, handlers):
    port = bench.free_port()
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, "scripts"))
    definition = {"collections": {"*": {"rules": {"create": "loggedIn", "update": "loggedIn"}}}}
    if handlers:
        with open(os.path.join(folder, "scripts", "Votes.js"), "w") as f:
            f.write(HANDLER)
        definition["handlers"] = {"CountVote": {"collection": "Vote", "events": ["create"], "phase": "post",
                                                "script": "scripts/Votes", "function": "count", "runAs": "system"}}
    app = os.path.join(folder, "roost.json")
    with open(app, "w") as f:
        bench.json.dump(definition, f)
    log = open(os.path.join(tmp, f"{name}.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(folder, "data"),
                             "--app", app, "--metrics-allow", "127.0.0.1"] + WORKERS, stdout=log, stderr=log)
    bench.wait_for(port, "/health")
    token = bench.call(port, "POST", "/ff/register", {"userName": "bench", "password": "benchpassword123"})["token"]
    auth = {"Authorization": f"Bearer {token}"}
    for index in range(100):
        bench.call(port, "POST", "/ff/resources/Counter", {"guid": f"c{index}", "votes": 0}, auth)
    return proc, port, auth


PB_HOOK = """onRecordAfterCreateSuccess((e) => {
    const counter = e.app.findRecordById("counters", e.record.get("counter"));
    counter.set("votes", counter.getInt("votes") + 1);
    e.app.save(counter);
    e.next();
}, "votes");
"""


def start_pocketbase(binary, tmp):
    """PocketBase with `votes` (counted by the hook), `ballots` (the same without a hook) and 100
    counters; returns the process, port and a user's token."""
    port = bench.free_port()
    data, hooks = os.path.join(tmp, "pb-data"), os.path.join(tmp, "pb-hooks")
    os.makedirs(hooks)
    with open(os.path.join(hooks, "votes.pb.js"), "w") as f:
        f.write(PB_HOOK)
    subprocess.run([binary, "superuser", "upsert", "bench@example.com", "benchpassword123", "--dir", data],
                   check=True, capture_output=True)
    log = open(os.path.join(tmp, "pocketbase.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{port}", "--dir", data, "--hooksDir", hooks,
                             "--hooksWatch=false"], stdout=log, stderr=log)
    bench.wait_for(port, "/api/health")
    su = {"Authorization": bench.call(port, "POST", "/api/collections/_superusers/auth-with-password",
                                      {"identity": "bench@example.com", "password": "benchpassword123"})["token"]}
    for name in ("votes", "ballots"):
        bench.call(port, "POST", "/api/collections", {
            "name": name, "type": "base", "createRule": "@request.auth.id != ''", "listRule": "",
            "fields": [{"name": "choice", "type": "text"}, {"name": "counter", "type": "text"}]}, su)
    bench.call(port, "POST", "/api/collections", {
        "name": "counters", "type": "base", "listRule": "", "fields": [{"name": "votes", "type": "number"}]}, su)
    for index in range(100):
        bench.call(port, "POST", "/api/collections/counters/records", {"id": f"c{index:014d}", "votes": 0}, su)
    bench.call(port, "POST", "/api/collections/users/records",
               {"email": "bench@example.com", "password": "benchpassword123", "passwordConfirm": "benchpassword123"})
    token = bench.call(port, "POST", "/api/collections/users/auth-with-password",
                       {"identity": "bench@example.com", "password": "benchpassword123"})["token"]
    return proc, port, token


def pocketbase_vote_script(tmp, collection, token):
    script = os.path.join(tmp, f"pb-{collection}.lua")
    with open(script, "w") as f:
        f.write(f"""wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "{token}"
request = function()
  return wrk.format(nil, "/api/collections/{collection}/records", nil, '{{"choice":"left","counter":"c' .. string.format("%014d", math.random(0, 99)) .. '"}}')
end
""")
    return script


def vote_script(tmp, name, auth):
    script = os.path.join(tmp, f"{name}.lua")
    headers = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in auth.items())
    with open(script, "w") as f:
        f.write(f"""wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
{headers}
request = function()
  return wrk.format(nil, "/ff/resources/Vote", nil, '{{"choice":"left","counter":"c' .. math.random(0, 99) .. '"}}')
end
""")
    return script


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", required=True)
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--results", default=os.path.join(bench.HERE, "RESULTS.md"))
    parser.add_argument("--script-workers", type=int)
    parser.add_argument("--pocketbase", help="a pocketbase binary: measure its JS hook in the same run")
    args = parser.parse_args()
    if args.script_workers:
        WORKERS.extend(["--script-workers", str(args.script_workers)])
    tmp = tempfile.mkdtemp(prefix="roost-bench-scripts-")
    results, procs = {}, []
    try:
        for name, handlers in (("without", False), ("with", True)):
            print(f"Roost, creates {name} a POST handler ...", file=sys.stderr, flush=True)
            proc, port, auth = start(args.roost, tmp, name, handlers)
            procs.append(proc)
            script = vote_script(tmp, name, auth)
            for connections in (50, 1):
                duration = args.duration if connections == 50 else max(3, args.duration // 2)
                results[(name, connections)] = bench.run_wrk(f"http://127.0.0.1:{port}/", script, connections, duration)
            if handlers:
                total = sum(o.get("votes", 0) for o in bench.call(port, "GET", "/ff/resources/Counter?count=1000", None, auth)["items"])
                votes = bench.call(port, "GET", "/ff/resources/Vote?count=1&total=true", None, auth).get("total")
                results["counted"] = (total, votes)
                metrics = bench.http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                metrics.request("GET", "/metrics")
                text = metrics.getresponse().read().decode()
                runs = re.search(r'roost_script_runs_total\{script="CountVote"\} (\d+)', text)
                failures = re.findall(r'roost_script_failures_total\{script="CountVote",code="([a-z_]+)"\} (\d+)', text)
                results["runs"] = (int(runs.group(1)) if runs else 0, failures)
            results[(name, "rss")] = bench.peak_rss_mib(proc.pid)
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        if args.pocketbase:
            print("PocketBase, creates without and with a JS hook ...", file=sys.stderr, flush=True)
            proc, port, token = start_pocketbase(args.pocketbase, tmp)
            procs.append(proc)
            for name, collection in (("pb without", "ballots"), ("pb with", "votes")):
                script = pocketbase_vote_script(tmp, collection, token)
                for connections in (50, 1):
                    duration = args.duration if connections == 50 else max(3, args.duration // 2)
                    results[(name, connections)] = bench.run_wrk(
                        f"http://127.0.0.1:{port}/", script, connections, duration)
            counters = bench.call(port, "GET", "/api/collections/counters/records?perPage=100", None)["items"]
            votes = bench.call(port, "GET", "/api/collections/votes/records?perPage=1", None, {"Authorization": token})
            results["pb counted"] = (sum(int(c.get("votes") or 0) for c in counters), votes.get("totalItems"))
            results["pb version"] = subprocess.run([args.pocketbase, "--version"], capture_output=True,
                                                   text=True).stdout.strip()
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    rows = []
    for connections in (50, 1):
        without, with_ = results[("without", connections)], results[("with", connections)]
        rows.append(f"| creates at {connections} connection(s) | {without['rps']:,.0f} | {with_['rps']:,.0f} | "
                    f"{with_['rps'] / without['rps']:.2f}× | {without['p99']:.2f} / {with_['p99']:.2f} ms | "
                    f"{without['errors'] + with_['errors']} |")
    pocketbase = ""
    if ("pb with", 50) in results:
        pb_rows = []
        for connections in (50, 1):
            without, with_ = results[("pb without", connections)], results[("pb with", connections)]
            roost = results[("with", connections)]
            pb_rows.append(f"| creates at {connections} connection(s) | {without['rps']:,.0f} | {with_['rps']:,.0f} | "
                           f"{with_['rps'] / without['rps']:.2f}× | {without['p99']:.2f} / {with_['p99']:.2f} ms | "
                           f"{without['errors'] + with_['errors']} | {roost['rps'] / with_['rps']:.2f}× |")
        pb_counted, pb_votes = results["pb counted"]
        pocketbase = f"""
PocketBase ({results['pb version']}) in the same run, the same creates (logged in, one of 100 counters
at random) without a hook, then with a JS hook (`pb_hooks`, `onRecordAfterCreateSuccess`, run before
the answer on its pool of prewarmed in-process goja runtimes) that reads the counter and saves it
with one more vote (`findRecordById`, `save`):

| scenario | without hook (req/s) | with JS hook (req/s) | ratio | p99 without / with | non-2xx | Roost with handler ÷ PocketBase with hook |
|---|---|---|---|---|---|---|
{chr(10).join(pb_rows)}

Votes counted by PocketBase's hook: {pb_counted:,} of {pb_votes:,}.
"""
    counted, votes = results.get("counted", (None, None))
    runs, failures = results.get("runs", (0, []))
    section = f"""## Server-side scripts

{datetime.date.today().isoformat()}, {os.cpu_count()} cores; `bench/scripts.sh`, wrk {args.duration} s at 50 connections.
Logged-in creates of a `Vote` with no handler, then with a POST handler (`runAs: system`) that reads
one of 100 `Counter` objects and writes it back with one more vote (`ff.getObjFromUrl`, `ff.updateObj`):
each create is then two writes, two reads and a round trip to a script worker process. Target:
with the handler, at least 0.5× the rate without.

| scenario | without handler (req/s) | with POST handler (req/s) | ratio | p99 without / with | non-2xx |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Handler runs: {runs:,} for {votes:,} votes created, failures: {failures or "none"}.
Votes counted by the handler: {counted:,} of {votes:,}. Every create's POST handler ran before
its answer; the difference is the script's own read-modify-write race (two votes for one counter
read the same count, and FatFractal's `updateObj` is last-write-wins), not lost runs. Peak RSS: {results[('without', 'rss')]:.0f} MiB without, {results[('with', 'rss')]:.0f} MiB
with (the server; its worker processes are separate).
{pocketbase}"""
    print(section)
    text = open(args.results).read() if os.path.exists(args.results) else "# Benchmark results\n"
    text = re.sub(r"\n## Server-side scripts\n.*?(?=\n## |\Z)", "\n", text, flags=re.S).rstrip() + "\n\n" + section
    with open(args.results, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
