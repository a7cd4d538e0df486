#!/usr/bin/env python3
"""A fake OpenID provider (Apple's or Google's ID tokens) on 127.0.0.1, standard library only.

Over TLS (--cert/--key, the tests' throwaway CA) it serves GET /keys, the JSON Web Key Set,
as Apple's https://appleid.apple.com/auth/keys and Google's /oauth2/v3/certs do. Its keys are
made with the openssl command: an RSA key (RS256, kid "rsa-1") and an EC P-256 key (ES256,
kid "ec-1"). A plain-HTTP control listener lets the test drive it:
  POST /issue  {"claims": {...}, "kid": "rsa-1", "forge": false, "header": {...}}
               -> {"token": "<compact JWT>"}; forge signs with a key the set does not list
  POST /rotate -> {"kid": "rsa-N"}: a new RSA key replaces the set's RSA key
  POST /down   {"down": true, "pad": N}: /keys answers 503 until told otherwise; with pad, the
               set carries N bytes of padding (a set larger than Roost reads)
Every fetch of the key set is a JSON line {"event": "keys", "status": ...} in --log.
Prints "PORT <tls port> <control port>" once listening."""

import argparse
import base64
import json
import os
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fake_jwt import RequestLog


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def openssl(*arguments):
    return subprocess.run(["openssl", *arguments], check=True, capture_output=True).stdout


def der_to_raw_ecdsa(der):
    """openssl gives SEQUENCE { r, s }; JWS wants r||s, 32 bytes each."""
    assert der[0] == 0x30
    index = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    parts = []
    for _ in range(2):
        assert der[index] == 0x02
        length = der[index + 1]
        value = der[index + 2:index + 2 + length].lstrip(b"\x00")
        parts.append(value.rjust(32, b"\x00"))
        index += 2 + length
    return parts[0] + parts[1]


class Key:
    def __init__(self, folder, kid, kind):
        self.kid, self.kind = kid, kind
        self.path = os.path.join(folder, kid + ".pem")
        if kind == "RSA":
            openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", self.path)
            modulus = openssl("rsa", "-in", self.path, "-noout", "-modulus").decode().strip().split("=", 1)[1]
            self.jwk = {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
                        "n": b64url(bytes.fromhex(modulus)), "e": "AQAB"}
        else:
            openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", self.path)
            point = openssl("pkey", "-in", self.path, "-pubout", "-outform", "DER")[-65:]
            self.jwk = {"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
                        "x": b64url(point[1:33]), "y": b64url(point[33:])}

    @property
    def alg(self):
        return "RS256" if self.kind == "RSA" else "ES256"

    def sign(self, message):
        result = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.path], input=message,
                                check=True, capture_output=True).stdout
        return result if self.kind == "RSA" else der_to_raw_ecdsa(result)


class Provider:
    def __init__(self, options):
        self.folder = options.key_dir
        os.makedirs(self.folder, exist_ok=True)
        self.log = RequestLog(options.log)
        self.lock = threading.Lock()
        self.rotations = 1
        self.keys = {"rsa-1": Key(self.folder, "rsa-1", "RSA"), "ec-1": Key(self.folder, "ec-1", "EC")}
        self.rogue = {"RSA": Key(self.folder, "rogue-rsa", "RSA"), "EC": Key(self.folder, "rogue-ec", "EC")}
        self.down = False
        self.pad = 0
        # Set while fetches of the key set are held unanswered (until released, 120 s at most).
        self.released = threading.Event()
        self.released.set()

    def key_set(self):
        with self.lock:
            keys = {"keys": [key.jwk for key in self.keys.values()]}
        if self.pad:
            keys["padding"] = "x" * self.pad
        return keys

    def issue(self, request):
        kid = request.get("kid", "rsa-1")
        with self.lock:
            key = self.keys.get(kid) or self.rogue["RSA"]
        if request.get("forge"):
            key = self.rogue[key.kind]
        header = {"alg": key.alg, "kid": kid, "typ": "JWT"}
        header.update(request.get("header", {}))
        signing_input = (b64url(json.dumps(header).encode()) + "." +
                         b64url(json.dumps(request["claims"]).encode()))
        return signing_input + "." + b64url(key.sign(signing_input.encode()))

    def rotate(self):
        with self.lock:
            self.rotations += 1
            kid = "rsa-%d" % self.rotations
        key = Key(self.folder, kid, "RSA")
        with self.lock:
            self.keys = {name: value for name, value in self.keys.items() if value.kind != "RSA"}
            self.keys[kid] = key
        return kid


def handler(provider, control):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *arguments):
            pass

        def do_GET(self):
            if control or self.path != "/keys":
                return self.reply(404, {"error": "not_found"})
            if not provider.released.is_set():
                provider.log.write({"event": "held"})
                provider.released.wait(120)
            status = 503 if provider.down else 200
            provider.log.write({"event": "keys", "status": status})
            self.reply(status, provider.key_set() if status == 200 else {"error": "unavailable"})

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            request = json.loads(body or b"{}")
            if not control:
                return self.reply(404, {"error": "not_found"})
            if self.path == "/issue":
                self.reply(200, {"token": provider.issue(request)})
            elif self.path == "/rotate":
                self.reply(200, {"kid": provider.rotate()})
            elif self.path == "/hold":
                if request.get("hold"):
                    provider.released.clear()
                else:
                    provider.released.set()
                self.reply(200, {"hold": not provider.released.is_set()})
            elif self.path == "/down":
                provider.down = bool(request.get("down"))
                provider.pad = int(request.get("pad", 0))
                self.reply(200, {"down": provider.down})
            else:
                self.reply(404, {"error": "not_found"})

        def reply(self, status, value):
            payload = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--key-dir", required=True, help="where the signing keys are made")
    parser.add_argument("--log", required=True)
    options = parser.parse_args()
    provider = Provider(options)
    tls = ThreadingHTTPServer(("127.0.0.1", 0), handler(provider, control=False))
    tls.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    tls.socket = context.wrap_socket(tls.socket, server_side=True)
    plain = ThreadingHTTPServer(("127.0.0.1", 0), handler(provider, control=True))
    plain.daemon_threads = True
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    print("PORT %d %d" % (tls.server_address[1], plain.server_address[1]), flush=True)
    tls.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
