#!/usr/bin/env python3
"""A fake APNs gateway: HTTP/2 over TLS (PyPI h2) on 127.0.0.1, port 0 unless given.

It checks what Apple checks (the ES256 provider token against the key's public half, the
apns-* headers, the payload), records every connection and request as a JSON line in --log,
and answers each device token as --script says (a JSON file):
  {"tokens": {"<token>": {"status": 410, "reason": "Unregistered", "retry_after": 7} |
                         {"hang": true}},
   "goaway_after": N,        # the Nth stream of the first connection gets GOAWAY, the socket closes
   "expire_first_jwt": true} # the first provider token seen is answered 403 ExpiredProviderToken
Others get 200 with an apns-id. Prints "PORT <n>" once listening."""

import argparse
import json
import socket
import ssl
import sys
import threading
import uuid

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from fake_jwt import load_fixture


class Gateway:
    def __init__(self, options):
        self.options = options
        self.script, self.verifier, self.log = load_fixture(options, "ES256")
        self.lock = threading.Lock()
        self.connections = 0
        self.first_jwt = None

    def serve(self, listener, context):
        while True:
            raw, _ = listener.accept()
            with self.lock:
                self.connections += 1
                number = self.connections
            self.log.write({"event": "connection", "connection": number})
            threading.Thread(target=self.connection, args=(raw, context, number), daemon=True).start()

    def connection(self, raw, context, number):
        try:
            stream = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError):
            raw.close()
            return
        if stream.selected_alpn_protocol() != "h2":
            self.log.write({"event": "refused", "connection": number, "alpn": stream.selected_alpn_protocol()})
            stream.close()
            return
        h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        h2conn.initiate_connection()
        h2conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1000})
        stream.sendall(h2conn.data_to_send())
        requests = {}
        streams_seen = 0
        try:
            while True:
                data = stream.recv(65536)
                if not data:
                    break
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        requests[event.stream_id] = {"headers": dict(event.headers), "body": b""}
                    elif isinstance(event, h2.events.DataReceived):
                        requests[event.stream_id]["body"] += event.data
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        streams_seen += 1
                        request = requests.pop(event.stream_id)
                        if number == 1 and streams_seen == self.script.get("goaway_after"):
                            self.log.write({"event": "goaway", "connection": number, "stream": event.stream_id})
                            h2conn.close_connection(error_code=0, last_stream_id=event.stream_id)
                            stream.sendall(h2conn.data_to_send())
                            stream.close()
                            return
                        self.answer(h2conn, event.stream_id, request, number)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        stream.sendall(h2conn.data_to_send())
                        stream.close()
                        return
                outgoing = h2conn.data_to_send()
                if outgoing:
                    stream.sendall(outgoing)
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass
        finally:
            self.log.write({"event": "closed", "connection": number})
            try:
                stream.close()
            except OSError:
                pass

    def answer(self, h2conn, stream_id, request, number):
        headers = request["headers"]
        body = request["body"]
        path = headers.get(":path", "")
        token = path[len("/3/device/"):] if path.startswith("/3/device/") else None
        record = {"event": "request", "connection": number, "stream": stream_id, "method": headers.get(":method"),
                  "path": path, "token": token, "payload_bytes": len(body),
                  "headers": {name: value for name, value in headers.items() if not name.startswith(":")}}
        try:
            record["payload"] = json.loads(body)
        except ValueError:
            record["payload"] = None
        status, reason = self.check(headers, body, record, token)
        behaviour = self.script.get("tokens", {}).get(token, {})
        if status == 200 and behaviour.get("hang"):
            record["answer"] = "none"
            self.log.write(record)
            return
        if status == 200 and "status" in behaviour:
            status, reason = behaviour["status"], behaviour.get("reason")
        response = [(":status", str(status)), ("apns-id", str(uuid.uuid4()).upper())]
        if status != 200 and behaviour.get("retry_after") is not None:
            response.append(("retry-after", str(behaviour["retry_after"])))
        record["status"] = status
        record["reason"] = reason
        self.log.write(record)
        if reason is None:
            h2conn.send_headers(stream_id, response, end_stream=True)
        else:
            payload = json.dumps({"reason": reason}).encode()
            h2conn.send_headers(stream_id, response + [("content-type", "application/json")])
            h2conn.send_data(stream_id, payload, end_stream=True)

    def check(self, headers, body, record, token):
        """What Apple would answer for a malformed request, or (200, None)."""
        if headers.get(":method") != "POST" or token is None:
            return 405 if headers.get(":method") != "POST" else 404, "BadPath"
        authorization = headers.get("authorization", "")
        if not authorization.startswith("bearer "):
            return 403, "MissingProviderToken"
        jwt = authorization[len("bearer "):]
        header, claims, problem = self.verifier.check(jwt)
        record["jwt"] = jwt
        record["jwt_header"] = header
        record["jwt_claims"] = claims
        if problem or header.get("kid") != self.options.key_id or claims.get("iss") != self.options.team_id:
            record["jwt_problem"] = problem or "kid or iss differ"
            return 403, "InvalidProviderToken"
        with self.lock:
            if self.first_jwt is None:
                self.first_jwt = jwt
            expired = self.script.get("expire_first_jwt") and jwt == self.first_jwt
        if expired:
            return 403, "ExpiredProviderToken"
        if headers.get("apns-topic") != self.options.topic:
            return 400, "DeviceTokenNotForTopic" if headers.get("apns-topic") else "MissingTopic"
        push_type = headers.get("apns-push-type")
        if push_type not in ("alert", "background"):
            return 400, "InvalidPushType"
        if headers.get("apns-priority") not in ("5", "10") or (push_type == "background"
                                                               and headers.get("apns-priority") != "5"):
            return 400, "BadPriority"
        if len(headers.get("apns-collapse-id", "").encode()) > 64:
            return 400, "BadCollapseId"
        if len(body) > 4096:
            return 413, "PayloadTooLarge"
        if not isinstance(record["payload"], dict) or not isinstance(record["payload"].get("aps"), dict):
            return 400, "PayloadEmpty"
        return 200, None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--public-key", required=True, help="the .p8 key's public half (PEM)")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--script")
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(options.cert, options.key)
    context.set_alpn_protocols(["h2"])
    gateway = Gateway(options)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", options.port))
    listener.listen(128)
    print("PORT %d" % listener.getsockname()[1], flush=True)
    gateway.serve(listener, context)


if __name__ == "__main__":
    sys.exit(main())
