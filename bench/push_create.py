#!/usr/bin/env python3
"""Push from a handler (issue 28): logged-in creates of a `Vote` with a POST handler that does nothing
but read its event, against the same handler sending one push to the voter's device
(ff.sendPushNotifications), on one Roost (SQLite) sending to the fake APNs (Tests/fakes/fake_apns.py,
HTTP/2 over TLS, verifying every provider token). The create answers once the push is in the outbox,
so the rate with a push should stay near the rate without; the fake receives the pushes after.
Also creates with no handler at all, for scale. Replaces the "## Push from a handler" section of
bench/RESULTS.md.
"""
import argparse, datetime, json, os, re, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

ROOT = os.path.dirname(bench.HERE)
HANDLERS = {
    "quiet": "exports.run = function () { var vote = require('ffef/FatFractal').getEventHandlerData(); };\n",
    "push": """var ff = require('ffef/FatFractal');
exports.run = function () {
    var vote = ff.getEventHandlerData();
    ff.sendPushNotifications([vote.notify], {title: 'New vote', body: vote.choice, collapseId: 'votes'});
};
""",
}


def openssl(*arguments):
    subprocess.run(["openssl", *arguments], check=True, capture_output=True)


def start_fake(python, tmp):
    """The fake APNs with a throwaway CA; returns its process, port, log and roost's options for it."""
    ca, ext = os.path.join(tmp, "ca.pem"), os.path.join(tmp, "server.ext")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", os.path.join(tmp, "ca.key"), "-out", ca, "-days", "1", "-subj", "/CN=Bench CA")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    server = os.path.join(tmp, "apns")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            server + ".key", "-out", server + ".csr", "-subj", "/CN=127.0.0.1")
    openssl("x509", "-req", "-in", server + ".csr", "-CA", ca, "-CAkey", os.path.join(tmp, "ca.key"),
            "-set_serial", "7", "-out", server + ".pem", "-days", "1", "-extfile", ext)
    key = os.path.join(tmp, "AuthKey")
    openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key + ".pem")
    openssl("pkey", "-in", key + ".pem", "-pubout", "-out", key + ".pub")
    log = os.path.join(tmp, "apns.jsonl")
    proc = subprocess.Popen([python, "-u", os.path.join(ROOT, "Tests/fakes/fake_apns.py"), "--cert", server + ".pem",
                             "--key", server + ".key", "--public-key", key + ".pub", "--key-id", "BENCHKEY01",
                             "--team-id", "BENCHTEAM1", "--topic", "org.roost.Bench", "--log", log],
                            stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, "apns.stderr"), "w"), text=True)
    port = int(proc.stdout.readline().split()[1])
    url = f"https://127.0.0.1:{port}"
    options = ["--apns-key-file", key + ".pem", "--apns-key-id", "BENCHKEY01", "--apns-team-id", "BENCHTEAM1",
               "--apns-url", url, "--apns-sandbox-url", url, "--push-ca-file", ca]
    return proc, log, options


def start(binary, tmp, name, handler, push_options):
    port = bench.free_port()
    folder = os.path.join(tmp, name)
    os.makedirs(os.path.join(folder, "scripts"))
    definition = {"collections": {"*": {"rules": {"create": "loggedIn"}}}}
    if handler:
        with open(os.path.join(folder, "scripts", "Votes.js"), "w") as f:
            f.write(HANDLERS[handler])
        definition["handlers"] = {"OnVote": {"collection": "Vote", "events": ["create"], "phase": "post",
                                             "script": "scripts/Votes", "function": "run", "runAs": "system"}}
    app = os.path.join(folder, "roost.json")
    with open(app, "w") as f:
        json.dump(definition, f)
    log = open(os.path.join(tmp, f"{name}.log"), "w")
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(folder, "data"),
                             "--app", app, "--metrics-allow", "127.0.0.1"] + push_options, stdout=log, stderr=log)
    bench.wait_for(port, "/health")
    registered = bench.call(port, "POST", "/ff/register",
                            {"userName": "bench", "password": "benchpassword123", "deviceId": "phone"})
    auth = {"Authorization": f"Bearer {registered['token']}"}
    bench.call(port, "PUT", "/ff/push/devices/phone", {"platform": "apns", "token": "ab" * 32,
                                                       "environment": "production", "bundleId": "org.roost.Bench"}, auth)
    return proc, port, auth, registered["user"]["guid"]


def vote_script(tmp, name, auth, guid):
    script = os.path.join(tmp, f"{name}.lua")
    headers = "".join(f'wrk.headers["{k}"] = "{v}"\n' for k, v in auth.items())
    with open(script, "w") as f:
        f.write(f"""wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
{headers}wrk.body = '{{"choice":"left","notify":"{guid}"}}'
""")
    return script


def metric(port, name):
    connection = bench.http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/metrics")
    found = re.search(rf"^{name} (\d+)$", connection.getresponse().read().decode(), re.M)
    return int(found.group(1)) if found else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", required=True)
    parser.add_argument("--python", required=True, help="a Python with PyPI h2, for the fake APNs")
    parser.add_argument("--duration", type=int, default=10)
    parser.add_argument("--results", default=os.path.join(bench.HERE, "RESULTS.md"))
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="roost-bench-push-")
    fake, fake_log, push_options = start_fake(args.python, tmp)
    results, procs = {}, [fake]
    try:
        # Last, with the fake stopped (SIGSTOP) while wrk runs: what the create pays for its push
        # when no delivery competes for the cores (the fake is Python on the same machine).
        for name, handler in (("none", None), ("quiet", "quiet"), ("push", "push"), ("stalled", "push")):
            print(f"Roost, creates with handler: {name} ...", file=sys.stderr, flush=True)
            proc, port, auth, guid = start(args.roost, tmp, name, handler, push_options)
            procs.append(proc)
            if name == "stalled":
                with open(fake_log) as f:
                    requests = sum(1 for line in f if '"event": "request"' in line)
                fake.send_signal(signal.SIGSTOP)
            results[name] = bench.run_wrk(f"http://127.0.0.1:{port}/ff/resources/Vote",
                                          vote_script(tmp, name, auth, guid), 50, args.duration)
            if name == "stalled":
                proc.kill()
                proc.wait(30)
                fake.send_signal(signal.SIGCONT)
            if name == "push":
                created = bench.call(port, "GET", "/ff/resources/Vote?count=1&total=true", None, auth).get("total")
                queued = metric(port, "roost_push_queue_depth")
                started = time.monotonic()
                while metric(port, "roost_push_sent_total") < created and time.monotonic() - started < 300:
                    time.sleep(0.5)
                results["drain"] = (created, queued, metric(port, "roost_push_sent_total"),
                                    time.monotonic() - started, metric(port, "roost_push_failed_total"))
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    none, quiet, push, stalled = results["none"], results["quiet"], results["push"], results["stalled"]
    created, queued, sent, seconds, failed = results["drain"]
    section = f"""## Push from a handler

{datetime.date.today().isoformat()}, {os.cpu_count()} cores; `bench/push_create.sh`, wrk {args.duration} s at 50 connections,
release build, SQLite, one Roost sending to the fake APNs (Python `h2`, TLS, verifying each provider
token) on the same machine. Logged-in creates of a `Vote`; the POST handler (`runAs: system`) either
only reads its event, or also calls `ff.sendPushNotifications` for the voter's one device, which
puts one push and its delivery in the outbox before the create answers.

| scenario | req/s | p50 | p99 | non-2xx |
|---|---|---|---|---|
| no handler | {none['rps']:,.0f} | {none['p50']:.2f} ms | {none['p99']:.2f} ms | {none['errors']} |
| POST handler, no push | {quiet['rps']:,.0f} | {quiet['p50']:.2f} ms | {quiet['p99']:.2f} ms | {quiet['errors']} |
| POST handler sending one push | {push['rps']:,.0f} | {push['p50']:.2f} ms | {push['p99']:.2f} ms | {push['errors']} |
| the same, the fake APNs stopped (SIGSTOP) | {stalled['rps']:,.0f} | {stalled['p50']:.2f} ms | {stalled['p99']:.2f} ms | {stalled['errors']} |

With a push: {push['rps'] / quiet['rps']:.2f}× the handler's rate without while the pushes are delivered
beside the creates, {stalled['rps'] / quiet['rps']:.2f}× with APNs not answering (nothing delivered:
the create waits for no provider, and what remains is the outbox's two rows and the device lookup). {created:,} votes created; when wrk stopped
{queued:,} deliveries were still queued; all {sent:,} were sent {seconds:.1f} s later (failed: {failed}); the fake
received {requests:,} requests.
"""
    with open(args.results) as f:
        text = f.read()
    if "## Push from a handler" in text:
        text = re.sub(r"## Push from a handler\n.*?(?=\n## |\Z)", section.rstrip() + "\n", text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + section
    with open(args.results, "w") as f:
        f.write(text)
    print(section)


if __name__ == "__main__":
    main()
