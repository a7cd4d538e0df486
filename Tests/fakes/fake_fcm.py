#!/usr/bin/env python3
"""A fake Google OAuth token endpoint and FCM HTTP v1 on 127.0.0.1 (HTTP/1.1, keep-alive).

POST /token exchanges an RS256 assertion (verified against --public-key, its iss, aud and scope
checked) for an access token valid --expires-in seconds. POST /v1/projects/<id>/messages:send
needs one of the tokens issued and answers each registration token as --script says:
  {"tokens": {"<token>": {"status": 404, "errorCode": "UNREGISTERED", "retry_after": 7}},
   "unauthenticated_first_token": true}  # the first access token issued is answered 401
Every exchange and send is a JSON line in --log. Prints "PORT <n>" once listening."""

import argparse
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fake_jwt import load_fixture

STATUS_NAMES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class State:
    def __init__(self, options):
        self.options = options
        self.script, self.verifier, self.log = load_fixture(options, "RS256")
        self.lock = threading.Lock()
        self.issued = []


def handler_for(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *arguments):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if self.path == "/token":
                self.token(body)
            elif self.path == "/v1/projects/%s/messages:send" % state.options.project_id:
                self.send_message(body)
            else:
                self.reply(404, {"error": {"code": 404, "message": "no such path", "status": "NOT_FOUND"}})

        def token(self, body):
            form = urllib.parse.parse_qs(body.decode())
            assertion = form.get("assertion", [""])[0]
            header, claims, problem = state.verifier.check(assertion)
            if not problem and form.get("grant_type") != ["urn:ietf:params:oauth:grant-type:jwt-bearer"]:
                problem = "grant_type is %r" % form.get("grant_type")
            if not problem and claims.get("iss") != state.options.client_email:
                problem = "iss is %r" % claims.get("iss")
            if not problem and claims.get("aud") != state.options.token_uri:
                problem = "aud is %r" % claims.get("aud")
            if not problem and claims.get("scope") != "https://www.googleapis.com/auth/firebase.messaging":
                problem = "scope is %r" % claims.get("scope")
            if not problem and claims.get("exp", 0) - claims.get("iat", 0) > 3600:
                problem = "lives longer than an hour"
            if problem:
                state.log.write({"event": "token", "problem": problem, "claims": claims})
                self.reply(400, {"error": "invalid_grant", "error_description": problem})
                return
            with state.lock:
                token = "fake-access-token-%d" % (len(state.issued) + 1)
                state.issued.append(token)
            state.log.write({"event": "token", "access_token": token, "claims": claims})
            self.reply(200, {"access_token": token, "expires_in": state.options.expires_in, "token_type": "Bearer"})

        def send_message(self, body):
            authorization = self.headers.get("authorization", "")
            access_token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else None
            try:
                message = json.loads(body)["message"]
            except (ValueError, KeyError, TypeError):
                message = None
            record = {"event": "send", "access_token": access_token, "message": message}
            with state.lock:
                known = access_token in state.issued
                first = state.issued[:1] == [access_token]
            if not known or (first and state.script.get("unauthenticated_first_token")):
                status, error_code = 401, None
            elif not isinstance(message, dict) or not message.get("token"):
                status, error_code = 400, None
            elif any(not isinstance(value, str) for value in message.get("data", {}).values()):
                status, error_code = 400, "INVALID_ARGUMENT"
            else:
                behaviour = state.script.get("tokens", {}).get(message["token"], {})
                status, error_code = behaviour.get("status", 200), behaviour.get("errorCode")
            record["status"] = status
            state.log.write(record)
            if status == 200:
                self.reply(200, {"name": "projects/%s/messages/%d" % (state.options.project_id, id(record))})
                return
            error = {"code": status, "message": "scripted answer", "status": STATUS_NAMES.get(status, "UNKNOWN")}
            if error_code:
                error["details"] = [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                                     "errorCode": error_code}]
            behaviour = state.script.get("tokens", {}).get((message or {}).get("token"), {})
            extra = {"retry-after": str(behaviour["retry_after"])} if "retry_after" in behaviour else {}
            self.reply(status, {"error": error}, extra)

        def reply(self, status, value, extra=None):
            payload = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, text in (extra or {}).items():
                self.send_header(name, text)
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--public-key", required=True, help="the service account key's public half (PEM)")
    parser.add_argument("--client-email", required=True)
    parser.add_argument("--project-id", required=True)
    parser.add_argument("--token-uri", help="the aud expected in assertions (default: this server's /token)")
    parser.add_argument("--expires-in", type=int, default=3600)
    parser.add_argument("--log", required=True)
    parser.add_argument("--script")
    options = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), None)
    server.daemon_threads = True
    port = server.server_address[1]
    if not options.token_uri:
        options.token_uri = "http://127.0.0.1:%d/token" % port
    server.RequestHandlerClass = handler_for(State(options))
    print("PORT %d" % port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
