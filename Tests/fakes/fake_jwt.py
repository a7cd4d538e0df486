"""JWT checks shared by the fake providers: the signature is verified with the `openssl` command
against the public key the test gave (the standard library has no ECDSA or RSA)."""

import base64
import json
import os
import subprocess
import tempfile
import threading


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _der_integer(value):
    value = value.lstrip(b"\x00") or b"\x00"
    if value[0] & 0x80:
        value = b"\x00" + value
    return b"\x02" + bytes([len(value)]) + value


def raw_ecdsa_to_der(raw):
    """JWS gives r||s (32 bytes each); openssl wants DER SEQUENCE { r, s }."""
    body = _der_integer(raw[:32]) + _der_integer(raw[32:])
    return b"\x30" + bytes([len(body)]) + body


class Verifier:
    """Verifies compact JWTs with one public key, each distinct token once (cached)."""

    def __init__(self, public_key_path, algorithm):
        self.public_key_path = public_key_path
        self.algorithm = algorithm
        self.cache = {}
        self.lock = threading.Lock()

    def check(self, token):
        """(header, claims, problem): problem is None when the token is well formed and signed."""
        parts = token.split(".")
        if len(parts) != 3:
            return None, None, "not a compact JWT"
        try:
            header = json.loads(b64url_decode(parts[0]))
            claims = json.loads(b64url_decode(parts[1]))
            signature = b64url_decode(parts[2])
        except Exception as error:  # noqa: BLE001 - any decoding failure is the answer
            return None, None, "undecodable: %s" % error
        if header.get("alg") != self.algorithm:
            return header, claims, "alg is %r, not %s" % (header.get("alg"), self.algorithm)
        with self.lock:
            verified = self.cache.get(token)
        if verified is None:
            verified = self._verify(("%s.%s" % (parts[0], parts[1])).encode(), signature)
            with self.lock:
                self.cache[token] = verified
        return header, claims, None if verified else "bad signature"

    def _verify(self, message, signature):
        if self.algorithm == "ES256":
            if len(signature) != 64:
                return False
            signature = raw_ecdsa_to_der(signature)
        with tempfile.TemporaryDirectory() as folder:
            message_path = os.path.join(folder, "message")
            signature_path = os.path.join(folder, "signature")
            with open(message_path, "wb") as file:
                file.write(message)
            with open(signature_path, "wb") as file:
                file.write(signature)
            result = subprocess.run(
                ["openssl", "dgst", "-sha256", "-verify", self.public_key_path, "-signature", signature_path,
                 message_path],
                capture_output=True)
            return result.returncode == 0


class RequestLog:
    """Each event as one JSON line, flushed at once so that the test reads what arrived."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8")
        self.lock = threading.Lock()

    def write(self, event):
        with self.lock:
            self.file.write(json.dumps(event) + "\n")
            self.file.flush()


def load_fixture(options, algorithm):
    """What both fakes start from: the test's script (--script, a JSON file), a verifier for
    --public-key and the log (--log)."""
    script = {}
    if options.script:
        with open(options.script, encoding="utf-8") as file:
            script = json.load(file)
    return script, Verifier(options.public_key, algorithm), RequestLog(options.log)
