#!/usr/bin/env python3
"""A TLS client for Roost's tests: verifies the server against the test CA, prints JSON."""
import http.client, json, os, signal, socket, ssl, sys, time

def context(cafile, minimum=None, maximum=None):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    if minimum: ctx.minimum_version = minimum
    if maximum: ctx.maximum_version = maximum
    return ctx

def get(connection, path):
    connection.request("GET", path)
    response = connection.getresponse()
    return {"status": response.status, "headers": dict(response.getheaders()),
            "body": response.read().decode()}

def serial(connection):
    return connection.sock.getpeercert()["serialNumber"]

def command_get(port, cafile, host, path, maximum=None):
    ctx = context(cafile, maximum=ssl.TLSVersion[maximum] if maximum else None)
    connection = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10)
    result = get(connection, path)
    result.update(version=connection.sock.version(), alpn=connection.sock.selected_alpn_protocol(),
                  cipher=connection.sock.cipher()[0], serial=serial(connection))
    return result

def command_old_protocol(port, cafile):
    # TLS 1.1 needs security level 0 on the client side of OpenSSL 3.
    ctx = context(cafile, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_1)
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                return {"accepted": tls.version()}
    except ssl.SSLError as error:
        return {"refused": error.reason}

def command_alpn(port, cafile, *protocols):
    ctx = context(cafile)
    ctx.set_alpn_protocols(list(protocols))
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                return {"selected": tls.selected_alpn_protocol()}
    except ssl.SSLError as error:
        return {"refused": str(error)}

def command_resume(port, cafile):
    ctx = context(cafile, maximum=ssl.TLSVersion.TLSv1_2)
    first = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
    get(first, "/health")
    session = first.sock.session
    first.close()
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
            return {"reused": tls.session_reused}

def command_reload(port, cafile, pid):
    """Keeps one connection open across SIGHUP: it must go on working with the old certificate
    while new connections get the new one."""
    ctx = context(cafile)
    kept = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
    before = get(kept, "/health")["status"]
    old = serial(kept)
    os.kill(int(pid), signal.SIGHUP)
    new = old
    for _ in range(200):
        fresh = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=10)
        get(fresh, "/health")
        new = serial(fresh)
        fresh.close()
        if new != old: break
        time.sleep(0.05)
    after = get(kept, "/health")["status"]
    return {"before": before, "after": after, "kept": serial(kept) == old, "changed": new != old}

def command_blob(port, cafile, size):
    """Streams an upload through TLS, downloads it whole (a file answer) and as a range."""
    import hashlib
    ctx = context(cafile)
    connection = http.client.HTTPSConnection("localhost", int(port), context=ctx, timeout=30)
    connection.request("POST", "/ff/resources/Photo", body=b'{"title":"tls"}',
                       headers={"Content-Type": "application/json"})
    created = connection.getresponse()
    guid = json.loads(created.read())["guid"]
    data = os.urandom(int(size))
    connection.request("PUT", f"/ff/resources/Photo/{guid}/image", body=data,
                       headers={"Content-Type": "application/octet-stream"})
    uploaded = connection.getresponse()
    uploaded.read()
    connection.request("GET", f"/ff/resources/Photo/{guid}/image")
    downloaded = connection.getresponse()
    whole = downloaded.read()
    connection.request("GET", f"/ff/resources/Photo/{guid}/image", headers={"Range": "bytes=10-19"})
    ranged = connection.getresponse()
    part = ranged.read()
    return {"created": created.status, "uploaded": uploaded.status, "downloaded": downloaded.status,
            "same": hashlib.sha256(whole).hexdigest() == hashlib.sha256(data).hexdigest(),
            "range": ranged.status, "part": part == data[10:20]}

commands = {"get": command_get, "blob": command_blob, "old-protocol": command_old_protocol,
            "resume": command_resume, "alpn": command_alpn, "reload": command_reload}
try:
    print(json.dumps(commands[sys.argv[1]](*sys.argv[2:])))
except Exception as error:
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
