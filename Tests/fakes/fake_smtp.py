#!/usr/bin/env python3
"""A fake SMTP server (PyPI aiosmtpd) on 127.0.0.1, port 0 unless given.

It speaks real ESMTP (EHLO, AUTH PLAIN/LOGIN when --user is given, MAIL, RCPT, DATA), parses
every message it accepts with Python's email package and records it as one JSON line in --log:
  {"event": "message", "mail_from", "rcpt_tos", "authenticated", "subject", "from", "to", "message_id",
   "text", "html"}
Recipients in --reject are refused with 550. Prints "PORT <n>" once listening."""

import argparse
import asyncio
import email
import email.policy
import json
import socket
import threading

from aiosmtpd.smtp import SMTP, AuthResult


class Log:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()

    def write(self, record):
        with self.lock, open(self.path, "a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")


class Recorder:
    def __init__(self, options, log):
        self.options = options
        self.log = log

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.options.reject:
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        plain = message.get_body(("plain",))
        html = message.get_body(("html",))
        self.log.write({
            "event": "message",
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "authenticated": bool(session.authenticated),
            "subject": str(message["Subject"]),
            "from": str(message["From"]),
            # As a mail program reads the header: every address in it, and the names shown.
            "from_addresses": [address.addr_spec for address in message["From"].addresses],
            "from_names": [address.display_name for address in message["From"].addresses],
            "to": str(message["To"]),
            "message_id": str(message["Message-ID"]),
            "text": plain.get_content() if plain else None,
            "html": html.get_content() if html else None,
        })
        return "250 2.0.0 accepted"


def main():
    import warnings
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", required=True)
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--reject", action="append", default=[])
    options = parser.parse_args()
    log = Log(options.log)
    handler = Recorder(options, log)

    def authenticate(server, session, envelope, mechanism, auth_data):
        good = auth_data.login.decode() == options.user and auth_data.password.decode() == options.password
        log.write({"event": "auth", "mechanism": mechanism, "success": good})
        return AuthResult(success=good)

    def factory():
        if options.user:
            return SMTP(handler, authenticator=authenticate, auth_required=True, auth_require_tls=False)
        return SMTP(handler)

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", options.port))
    listener.listen(64)
    loop = asyncio.new_event_loop()
    loop.run_until_complete(loop.create_server(factory, sock=listener))
    print("PORT %d" % listener.getsockname()[1], flush=True)
    loop.run_forever()


if __name__ == "__main__":
    main()
