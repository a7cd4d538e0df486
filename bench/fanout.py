#!/usr/bin/env python3
"""Realtime fan-out: Roost's `GET /ff/events` against PocketBase's `/api/realtime`, in one run (issue 16).

For each N (subscribers) and each server, on a fresh server: N anonymous SSE subscribers to one
collection (Roost `/ff/events?collection=Post`; PocketBase `/api/realtime`, then a POST of the
subscription `posts/*` as its JS SDK sends it), held by two subscriber processes with non-blocking
sockets and `selectors`. Then:

- idle: the server's RSS before and after the N streams open, and its CPU time while they sit idle;
- load: one logged-in writer creates posts through the normal create endpoint at a steady rate;
  each subscriber notes when each create arrives. Latency = receipt - the create's acknowledgement
  (its HTTP response read by the writer), over every delivery (negative when the event outran the
  response); lost = expected deliveries (every acknowledged create, to every subscriber) not received;
- forced reconnect: writes go on while 10% of the subscribers are dropped for ~2 s and reconnect,
  Roost with `Last-Event-ID` (the last id it read), PocketBase as its client does (a new connection
  and subscription); lost events are counted per side.

Replaces the "## Realtime fan-out" section of bench/RESULTS.md.
"""
import argparse, datetime, http.client, json, os, platform, resource, shutil, signal, subprocess, sys, tempfile
import threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the shared helpers: free_port, call, wait_for, PocketBase)
from sse_subscribers import Subscribers  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Writer(threading.Thread):
    """Creates posts at a steady rate for `duration` seconds; notes each create's acknowledgement,
    and samples the server's RSS meanwhile."""

    def __init__(self, port, path, headers, id_field, rate, duration, pid):
        super().__init__(daemon=True)
        self.port, self.path, self.headers, self.id_field = port, path, headers, id_field
        self.rate, self.duration, self.pid = rate, duration, pid
        self.acks, self.sent, self.peak_rss, self.errors = {}, {}, 0.0, 0

    def run(self):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        start = time.monotonic()
        count = int(self.rate * self.duration)
        for i in range(count):
            delay = start + i / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if i % max(1, int(self.rate / 4)) == 0:
                self.peak_rss = max(self.peak_rss, rss_mib(self.pid))
            body = json.dumps({"content": f"fan-out post {i}", "gender": "female", "author": "fanout"})
            sent = time.monotonic()
            c.request("POST", self.path, body=body, headers={"Content-Type": "application/json", **self.headers})
            r = c.getresponse()
            payload = r.read()
            acked = time.monotonic()
            if r.status >= 300:
                self.errors += 1
                continue
            key = json.loads(payload)[self.id_field]
            self.acks[key], self.sent[key] = acked, sent
        self.peak_rss = max(self.peak_rss, rss_mib(self.pid))
        self.elapsed = time.monotonic() - start


def percentile(values, fraction):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def tally(deliveries, indexes, acks):
    """Latencies (ms) and lost/duplicate/unknown counts over the given subscribers."""
    latencies, from_send, lost, duplicates = [], [], 0, 0
    first, last = {}, {}    # per create: its earliest and latest delivery
    sent = acks[1]
    acks = acks[0]
    for index in indexes:
        seen = set()
        for key, at in deliveries.get(index, []):
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            if key in acks:
                latencies.append((at - acks[key]) * 1000)
                first[key], last[key] = min(first.get(key, at), at), max(last.get(key, at), at)
                from_send.append((at - sent[key]) * 1000)
        lost += sum(1 for key in acks if key not in seen)
    return {"p50": percentile(latencies, 0.5), "p99": percentile(latencies, 0.99),
            "send p99": percentile(from_send, 0.99), "delivered": len(latencies),
            "p10": percentile(latencies, 0.1), "p90": percentile(latencies, 0.9),
            "first stream p50": percentile([(first[k] - acks[k]) * 1000 for k in first], 0.5),
            "last stream p50": percentile([(last[k] - acks[k]) * 1000 for k in last], 0.5),
            "expected": len(acks) * len(indexes), "lost": lost, "duplicates": duplicates}


def start_roost(binary, tmp, count):
    port = bench.free_port()
    app = os.path.join(tmp, "roost.json")
    with open(app, "w") as f:
        json.dump({"collections": {"Post": {"indexes": ["gender"]}}}, f)
    log = open(os.path.join(tmp, "roost.log"), "w")
    limit = str(count + 200)
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(tmp, "roost-data"),
                             "--app", app, "--events-max-streams", limit, "--events-max-streams-per-user", limit,
                             "--events-max-streams-per-client", limit,
                             "--max-connections-per-client", limit],
                            stdout=log, stderr=log)
    bench.wait_for(port, "/health")
    token = bench.call(port, "POST", "/ff/register", {"userName": "bench", "password": "benchpassword123"})["token"]
    return proc, port, {"Authorization": f"Bearer {token}"}, "/ff/resources/Post", "guid"


def start_pocketbase(binary, tmp):
    proc, port, token, _ = bench.start_pocketbase(binary, tmp)
    return proc, port, {"Authorization": token}, "/api/collections/posts/records", "id"


def run_server(kind, binary, count, rate, args):
    tmp = tempfile.mkdtemp(prefix=f"roost-fanout-{kind}-")
    proc = subs = None
    result = {}
    try:
        print(f"{kind}, {count} subscribers: starting ...", file=sys.stderr, flush=True)
        if kind == "roost":
            proc, port, headers, path, id_field = start_roost(binary, tmp, count)
        else:
            proc, port, headers, path, id_field = start_pocketbase(binary, tmp)
        # A few writes first, so that the baseline includes the write path's warm-up.
        warm = Writer(port, path, headers, id_field, 50, 0.4, proc.pid)
        warm.run()
        time.sleep(1)
        result["rss before"] = rss_mib(proc.pid)
        subs = Subscribers(kind, port, count)
        opened = time.monotonic()
        subs.open(list(range(count)))
        result["open seconds"] = time.monotonic() - opened
        time.sleep(2)
        cpu, at = cpu_seconds(proc.pid), time.monotonic()
        time.sleep(args.idle)
        result["idle cpu"] = (cpu_seconds(proc.pid) - cpu) / (time.monotonic() - at)
        result["rss idle"] = rss_mib(proc.pid)
        result["per stream KiB"] = (result["rss idle"] - result["rss before"]) * 1024 / count

        print(f"{kind}, {count} subscribers: {rate}/s for {args.duration} s ...", file=sys.stderr, flush=True)
        result["target rate"] = rate
        subs.collect()
        cpu = cpu_seconds(proc.pid)
        client_cpu = sum(cpu_seconds(p.pid) for p in subs.procs)
        writer = Writer(port, path, headers, id_field, rate, args.duration, proc.pid)
        writer.start()
        writer.join()
        time.sleep(args.drain)
        result["load cpu"] = (cpu_seconds(proc.pid) - cpu) / (writer.elapsed + args.drain)
        result["client cpu"] = (sum(cpu_seconds(p.pid) for p in subs.procs) - client_cpu) / (writer.elapsed + args.drain)
        result["rss load"] = max(writer.peak_rss, rss_mib(proc.pid))
        result["rate"] = len(writer.acks) / writer.elapsed
        result["write errors"] = writer.errors
        deliveries, unexpected = subs.collect()
        result["load"] = tally(deliveries, range(count), (writer.acks, writer.sent))
        result["unexpected"] = unexpected

        if args.no_reconnect:
            print(json.dumps(result, indent=1, default=str), file=sys.stderr, flush=True)
            return result
        print(f"{kind}, {count} subscribers: forced reconnect ...", file=sys.stderr, flush=True)
        dropped = list(range(0, count, 10))
        writer = Writer(port, path, headers, id_field, rate, args.duration, proc.pid)
        writer.start()
        time.sleep(args.duration / 3)
        last_ids = subs.drop(dropped)
        time.sleep(args.away)
        subs.open(dropped, last_ids if kind == "roost" else None)
        writer.join()
        time.sleep(args.drain)
        deliveries, unexpected = subs.collect()
        kept = [i for i in range(count) if i % 10]
        result["reconnect dropped"] = tally(deliveries, dropped, (writer.acks, writer.sent))
        result["reconnect kept"] = tally(deliveries, kept, (writer.acks, writer.sent))
        result["reconnect writes"] = len(writer.acks)
        result["unexpected"] += unexpected
        result["peak rss"] = bench.peak_rss_mib(proc.pid)
    finally:
        try:
            if subs:
                subs.close()
        finally:
            stop(proc)
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result, indent=1, default=str), file=sys.stderr, flush=True)
    return result


def stop(proc):
    """SIGTERM, then SIGKILL if the server has not ended in 30 s."""
    if proc and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def sweep(binary, count, rates, args):
    """Roost alone at `count` subscribers and rising write rates, on one server: where its
    fan-out stops keeping up (the last third's latency then grows past the first's)."""
    tmp = tempfile.mkdtemp(prefix="roost-fanout-sweep-")
    proc = subs = None
    rows = []
    try:
        proc, port, headers, path, id_field = start_roost(binary, tmp, count)
        subs = Subscribers("roost", port, count)
        subs.open(list(range(count)))
        for rate in rates:
            print(f"roost, {count} subscribers: sweep at {rate:g}/s ...", file=sys.stderr, flush=True)
            time.sleep(1)
            subs.collect()
            cpu = cpu_seconds(proc.pid)
            writer = Writer(port, path, headers, id_field, rate, args.duration, proc.pid)
            writer.start()
            writer.join()
            time.sleep(args.drain)
            cpu = (cpu_seconds(proc.pid) - cpu) / (writer.elapsed + args.drain)
            deliveries, _ = subs.collect()
            everything = tally(deliveries, range(count), (writer.acks, writer.sent))
            order = sorted(writer.acks, key=writer.acks.get)
            last = set(order[-len(order) // 3:])
            last_third = tally(deliveries, range(count), ({k: writer.acks[k] for k in last},
                                                          {k: writer.sent[k] for k in last}))
            rows.append(f"| {rate:g} | {everything['p50']:.2f} / {everything['p99']:.2f} | "
                        f"{last_third['p50']:.2f} / {last_third['p99']:.2f} | {everything['lost']} | {cpu * 100:.0f}% |")
    finally:
        try:
            if subs:
                subs.close()
        finally:
            stop(proc)
            shutil.rmtree(tmp, ignore_errors=True)
    return rows


def verdict(ok):
    return "**met**" if ok else "**not met**"


def write_section(results, counts, args, pb_version, sweep_rows):
    rows = ["| subscribers | server | open all (s) | RSS before → idle (MiB) | RSS per idle stream (KiB) | CPU idle | "
            "writes/s (target) | delivery p50 / p99 ms (from ack) | p99 from send ms | delivered / expected | lost | "
            "RSS under load (MiB) | CPU under load | subscribers' CPU |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    reconnect = ["| subscribers | server | writes | dropped subscribers: delivered / expected | lost | duplicates | "
                 "others: lost |", "|---|---|---|---|---|---|---|"]
    targets = []
    for count in counts:
        for kind, name in (("roost", "Roost"), ("pocketbase", "PocketBase")):
            r = results[(kind, count)]
            load = r["load"]
            rows.append(f"| {count} | {name} | {r['open seconds']:.1f} | {r['rss before']:.1f} → {r['rss idle']:.1f} | "
                        f"{r['per stream KiB']:.1f} | {r['idle cpu'] * 100:.1f}% | {r['rate']:.1f} ({r['target rate']:g}) | "
                        f"{load['p50']:.2f} / {load['p99']:.2f} | {load['send p99']:.2f} | "
                        f"{load['delivered']} / {load['expected']} | {load['lost']} | {r['rss load']:.1f} | "
                        f"{r['load cpu'] * 100:.0f}% | {r['client cpu'] * 100:.0f}% |")
            d, k = r["reconnect dropped"], r["reconnect kept"]
            reconnect.append(f"| {count} | {name} | {r['reconnect writes']} | {d['delivered']} / {d['expected']} | "
                             f"{d['lost']} | {d['duplicates']} | {k['lost']} |")
        roost, pb = results[("roost", count)], results[("pocketbase", count)]
        ratio = pb["load"]["p99"] / roost["load"]["p99"] if roost["load"]["p99"] > 0 else float("inf")
        per_stream = roost["per stream KiB"] / pb["per stream KiB"] if pb["per stream KiB"] > 0 else float("inf")
        targets.append(f"- {count} subscribers: p99 {roost['load']['p99']:.2f} ms vs PocketBase's "
                       f"{pb['load']['p99']:.2f} ms (PocketBase's ÷ Roost's = {ratio:.2f}×; target ≥ 2×): "
                       f"{verdict(roost['load']['p99'] <= pb['load']['p99'] / 2)}. RSS per idle stream "
                       f"{roost['per stream KiB']:.1f} vs {pb['per stream KiB']:.1f} KiB (Roost's ÷ PocketBase's = {per_stream:.2f}×; target ≤ 0.10×): "
                       f"{verdict(roost['per stream KiB'] <= pb['per stream KiB'] / 10)}. Lost across the forced "
                       f"reconnect: Roost {roost['reconnect dropped']['lost'] + roost['reconnect kept']['lost']} "
                       f"(target 0: {verdict(roost['reconnect dropped']['lost'] + roost['reconnect kept']['lost'] == 0)}), "
                       f"PocketBase {pb['reconnect dropped']['lost'] + pb['reconnect kept']['lost']}.")
    notes = []
    for (kind, count), r in results.items():
        if r["unexpected"] or r["write errors"]:
            notes.append(f"- {kind}, {count}: {r['write errors']} failed writes; "
                         f"{len(r['unexpected'])} unexpected stream messages, e.g. {r['unexpected'][:3]}")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    load_average = " / ".join(f"{x:.1f}" for x in args.load)
    machine = f"{os.cpu_count()} cores ({cpu}), {round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GiB, {platform.system()} {platform.release()}"
    section = f"""## Realtime fan-out

Written by `bench/fanout.py` on {datetime.date.today().isoformat()} ({datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC).
Machine: {machine}; the servers, the two subscriber processes and the writer share its cores.
Roost (release build, SQLite) against PocketBase ({pb_version}), each fresh for every N, one at a time.

Method: N anonymous SSE subscribers to one publicly readable collection: Roost
`GET /ff/events?collection=Post` (`--events-max-streams` and `--events-max-streams-per-user` raised
to N + 200: every subscriber comes from 127.0.0.1); PocketBase `GET /api/realtime`, then
`POST /api/realtime` with the `PB_CONNECT` clientId and `posts/*` (what its JS SDK sends for
`subscribe('*')`). Two Python processes hold the streams (non-blocking sockets, `selectors`). One
logged-in writer creates posts through the normal create endpoint on one keep-alive connection at
the rate in the table for {args.duration:g} s. Latency is each delivery's receipt minus the acknowledgement of
its create (the writer has read the response; negative when the event outran it), p50/p99 over every
delivery; "from send" counts from the moment the create was sent. Lost = every acknowledged create,
to every subscriber, minus what arrived ({args.drain:g} s after the last write). RSS is VmRSS: before the
streams open (after a few warm-up writes) and after they have sat idle for 2 + {args.idle:g} s; RSS per
idle stream = the difference ÷ N; "under load" is the highest VmRSS sampled during the writes. CPU is
the server's utime + stime from `/proc/PID/stat` per wall-clock second (100% = one core); the
subscribers' CPU is the same for the two Python processes that read the streams (well under their
200%: they keep up). Load average (1, 5, 15 min) when the run started: {load_average}; other work on the machine shares
its cores, so single runs are noisy, the tails most.

{chr(10).join(rows)}

Forced reconnect: writes at the same rate for {args.duration:g} s; a third of the way in, every tenth
subscriber closes its connection, stays away {args.away:g} s and reconnects: Roost with
`Last-Event-ID` set to the last id it read, PocketBase with a new connection and subscription (its
`id:` is the client id, not a position, so there is nothing to resume from).

{chr(10).join(reconnect)}

Targets (issue 16):
{chr(10).join(targets)}
"""
    if sweep_rows:
        section += f"""
Roost alone at {max(counts)} subscribers and rising write rates ({args.duration:g} s each, one server):
while the fan-out keeps up, the last third of the writes is delivered as fast as the first.

| writes/s | p50 / p99 ms (from ack) | last third of the writes: p50 / p99 ms | lost | server CPU |
|---|---|---|---|---|
""" + "\n".join(sweep_rows) + "\n"
    if notes:
        section += "\nAnomalies:\n" + "\n".join(notes) + "\n"
    print(section)
    old = open(args.results).read() if os.path.exists(args.results) else "# Benchmark results\n"
    if "## Realtime fan-out" in old:
        before, after = old.split("## Realtime fan-out", 1)
        rest = after.split("\n## ", 1)
        old = before + (("## " + rest[1]) if len(rest) > 1 else "")
    with open(args.results, "w") as f:
        f.write(old.rstrip() + "\n\n" + section)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--roost", required=True)
    parser.add_argument("--pocketbase", help="needed when --servers names pocketbase")
    parser.add_argument("--subscribers", default="100,1000", help="comma-separated N")
    parser.add_argument("--rate", default="50", help="creates per second: one, or one per N (comma-separated)")
    parser.add_argument("--duration", type=float, default=10, help="seconds of writes per phase")
    parser.add_argument("--idle", type=float, default=3, help="seconds of idle CPU measurement")
    parser.add_argument("--away", type=float, default=2, help="seconds a dropped subscriber stays away")
    parser.add_argument("--drain", type=float, default=2, help="seconds to wait for deliveries after the last write")
    parser.add_argument("--sweep", default="5,10,20,35", help="Roost alone at the largest N at these rates ('' for none)")
    parser.add_argument("--results", default=os.path.join(bench.HERE, "RESULTS.md"))
    parser.add_argument("--no-results", action="store_true", help="print, do not rewrite RESULTS.md")
    parser.add_argument("--no-reconnect", action="store_true", help="skip the forced-reconnect phase")
    parser.add_argument("--servers", default="roost,pocketbase",
                        help="which servers to measure (comma-separated); with one, RESULTS.md is not rewritten")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))   # inherited by the servers
    args.load = os.getloadavg()
    counts = [int(n) for n in args.subscribers.split(",")]
    rates = [float(r) for r in args.rate.split(",")]
    rates = dict(zip(counts, rates if len(rates) == len(counts) else rates[:1] * len(counts)))
    results = {}
    for count in counts:
        if count * 2 + 200 > hard:
            raise SystemExit(f"{count} subscribers need more than the open-file limit {hard}")
        for kind in ("roost", "pocketbase"):
            if kind in args.servers.split(","):
                results[(kind, count)] = run_server(kind, getattr(args, kind), count, rates[count], args)
    pb_version = subprocess.run([args.pocketbase, "--version"], capture_output=True, text=True).stdout.strip() \
        if args.pocketbase else ""
    if args.no_results:
        args.results = os.devnull
    sweep_rows = sweep(args.roost, max(counts), [float(r) for r in args.sweep.split(",")], args) if args.sweep else []
    if len(results) < 2 * len(counts):
        print("\n".join(sweep_rows), file=sys.stderr)   # the runs' numbers are above, as JSON
        return
    write_section(results, counts, args, pb_version, sweep_rows)


if __name__ == "__main__":
    main()
