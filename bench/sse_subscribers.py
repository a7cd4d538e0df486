"""SSE subscribers for bench/fanout.py: processes that each hold many Server-Sent Events streams on
non-blocking sockets with `selectors`, to Roost's `/ff/events` or PocketBase's `/api/realtime`, and
note when each created object arrives on each stream."""
import http.client, json, multiprocessing, selectors, socket, time

WORKERS = 2


class Stream:
    """One SSE connection: an HTTP response (chunked or not) cut into events."""

    def __init__(self, index, kind, port, last_id=None):
        self.index, self.kind, self.port = index, kind, port
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.head_done, self.chunked, self.chunk_left, self.skip = False, False, 0, 0
        self.raw, self.text = b"", b""
        self.ready, self.client_id, self.closed = False, None, False
        self.last_id = last_id
        path = "/ff/events?collection=Post" if kind == "roost" else "/api/realtime"
        extra = f"Last-Event-ID: {last_id}\r\n" if last_id is not None else ""
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                          f"Cache-Control: no-store\r\n{extra}\r\n".encode())
        self.sock.setblocking(False)

    def body(self, data):
        """The response body's bytes in `data` (headers and chunk framing removed)."""
        if not self.head_done:
            self.raw += data
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return b""
            head = self.raw[:end].decode("latin-1")
            if " 200 " not in head.split("\r\n", 1)[0]:
                raise RuntimeError(f"stream refused: {head.splitlines()[0]} {self.raw[end:end + 200]!r}")
            self.chunked = "transfer-encoding: chunked" in head.lower()
            self.head_done, data, self.raw = True, self.raw[end + 4:], b""
        if not self.chunked:
            return data
        self.raw += data
        out = []
        while self.raw:
            if self.skip:
                cut = min(self.skip, len(self.raw))
                self.raw, self.skip = self.raw[cut:], self.skip - cut
            elif self.chunk_left:
                take = self.raw[:self.chunk_left]
                out.append(take)
                self.raw, self.chunk_left = self.raw[len(take):], self.chunk_left - len(take)
                if not self.chunk_left:
                    self.skip = 2
            else:
                line = self.raw.find(b"\r\n")
                if line < 0:
                    break
                size = int(self.raw[:line].split(b";")[0], 16)
                self.raw = self.raw[line + 2:]
                if size == 0:
                    self.closed = True
                    break
                self.chunk_left = size
        return b"".join(out)

    def events(self, data):
        """(id, event, data) for every complete event in `data`."""
        self.text += self.body(data).replace(b"\r\n", b"\n")
        while True:
            end = self.text.find(b"\n\n")
            if end < 0:
                return
            block, self.text = self.text[:end], self.text[end + 2:]
            fields = {}
            for line in block.split(b"\n"):
                if line.startswith(b":"):
                    fields.setdefault("comment", line[1:].strip())
                    continue
                name, _, value = line.partition(b":")
                fields[name.decode()] = value[1:] if value.startswith(b" ") else value
            yield fields


def object_id(kind, data):
    """The created object's id, found without parsing the whole JSON (the subscribers' CPU is the
    bottleneck at 1000 streams); falls back to parsing."""
    marker = b'"guid":"' if kind == "roost" else b'"id":"'
    at = data.find(marker)
    if at >= 0:
        start = at + len(marker)
        return data[start:data.index(b'"', start)].decode()
    payload = json.loads(data)
    return payload["guid"] if kind == "roost" else payload["record"]["id"]


def subscribe_pocketbase(port, client_id):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("POST", "/api/realtime", body=json.dumps({"clientId": client_id, "subscriptions": ["posts/*"]}),
              headers={"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    if r.status >= 300:
        raise RuntimeError(f"subscription refused: {r.status}")


def worker(pipe, kind, port):
    """Holds streams; answers commands from the main process over `pipe`."""
    sel = selectors.DefaultSelector()
    sel.register(pipe, selectors.EVENT_READ, None)
    streams = {}            # index -> Stream
    deliveries = {}         # index -> [(key, monotonic time)]
    last_ids = {}           # index -> last id read (Roost)
    waiting = None          # (reply, set of indexes not yet subscribed)
    unexpected = []

    def open_stream(index, last_id=None):
        s = Stream(index, kind, port, last_id)
        streams[index] = s
        sel.register(s.sock, selectors.EVENT_READ, s)

    def close_stream(s):
        sel.unregister(s.sock)
        s.sock.close()
        streams.pop(s.index, None)

    while True:
        for key, _ in sel.select(timeout=0.5):
            s = key.data
            if s is not None and streams.get(s.index) is not s:
                continue    # dropped by a command handled earlier in this round
            if s is None:
                command = pipe.recv()
                op = command[0]
                if op == "open":      # open these indexes, reply when all are subscribed
                    for start in range(0, len(command[1]), 50):
                        for index in command[1][start:start + 50]:
                            open_stream(index, command[2].get(index) if len(command) > 2 else None)
                    waiting = (op, set(command[1]))
                elif op == "drop":
                    for index in command[1]:
                        last_ids[index] = streams[index].last_id
                        close_stream(streams[index])
                    pipe.send(("dropped", {i: last_ids[i] for i in command[1]}))
                elif op == "collect":
                    pipe.send(("deliveries", deliveries, unexpected))
                    deliveries, unexpected = {}, []
                elif op == "quit":
                    for stream in list(streams.values()):
                        close_stream(stream)
                    pipe.send(("bye",))
                    return
                continue
            try:
                data = s.sock.recv(262144)
            except BlockingIOError:
                continue
            now = time.monotonic()
            if not data:
                unexpected.append(f"stream {s.index} closed by the server")
                close_stream(s)
                continue
            for event in s.events(data):
                if "id" in event and kind == "roost":
                    s.last_id = event["id"].decode()
                name = event.get("event", b"").decode()
                if kind == "roost" and event.get("comment") == b"subscribed":
                    s.ready = True
                elif kind == "pocketbase" and name == "PB_CONNECT":
                    s.client_id = json.loads(event["data"])["clientId"]
                    subscribe_pocketbase(port, s.client_id)
                    s.ready = True
                elif "data" in event and name in ("create", "posts/*"):
                    deliveries.setdefault(s.index, []).append((object_id(kind, event["data"]), now))
                elif name:
                    unexpected.append(f"stream {s.index}: event {name}")
                if s.ready and waiting and s.index in waiting[1]:
                    waiting[1].discard(s.index)
                    if not waiting[1]:
                        pipe.send(("ready",))
                        waiting = None
            if s.closed:
                unexpected.append(f"stream {s.index} ended")
                close_stream(s)


class Subscribers:
    def __init__(self, kind, port, count):
        self.kind, self.count = kind, count
        self.pipes, self.procs = [], []
        context = multiprocessing.get_context("fork")
        for _ in range(WORKERS):
            ours, theirs = context.Pipe()
            proc = context.Process(target=worker, args=(theirs, kind, port), daemon=True)
            proc.start()
            self.pipes.append(ours)
            self.procs.append(proc)

    def owner(self, index):
        return self.pipes[index % WORKERS]

    def ask(self, messages, timeout=120):
        """Sends {pipe: message}; returns {pipe: reply}."""
        for pipe, message in messages.items():
            pipe.send(message)
        replies = {}
        for pipe in messages:
            if not pipe.poll(timeout):
                raise SystemExit(f"a subscriber process did not answer {messages[pipe][0]}")
            replies[pipe] = pipe.recv()
        return replies

    def open(self, indexes, last_ids=None):
        by_pipe = {}
        for i in indexes:
            by_pipe.setdefault(self.owner(i), []).append(i)
        self.ask({p: ("open", ids, last_ids or {}) for p, ids in by_pipe.items()})

    def drop(self, indexes):
        by_pipe = {}
        for i in indexes:
            by_pipe.setdefault(self.owner(i), []).append(i)
        last = {}
        for reply in self.ask({p: ("drop", ids) for p, ids in by_pipe.items()}).values():
            last.update(reply[1])
        return last

    def collect(self):
        deliveries, unexpected = {}, []
        for reply in self.ask({p: ("collect",) for p in self.pipes}).values():
            deliveries.update(reply[1])
            unexpected += reply[2]
        return deliveries, unexpected

    def close(self):
        try:
            self.ask({p: ("quit",) for p in self.pipes}, timeout=30)
        finally:
            for proc in self.procs:
                proc.join(5)
                if proc.is_alive():
                    proc.kill()
