import CLibEvent
import COpenSSL
import Dispatch

// A connection over TLS: libevent's OpenSSL bufferevent does the handshake and the encryption,
// so the rest of Connection reads and writes plaintext as over TCP. What differs is here: the
// handshake runs under its own deadline from the accept (ConnectionStateMachine.deadline), a failed handshake is logged (once a
// minute at most) and closed, and a connection that ends cleanly sends close_notify.
extension Connection {
    /// A socket bufferevent, or an accepting OpenSSL one when the server speaks TLS.
    static func makeBufferEvent(fd: Int32, loop: EventLoop) -> OpaquePointer? {
        guard let tls = loop.server.configuration.tls else {
            return bufferevent_socket_new(loop.base, fd, roost_bev_opt_close_on_free())
        }
        guard let session = tls.makeSession() else { return nil }
        // On failure libevent frees the session (close-on-free); the caller closes the socket.
        guard
            let bev = bufferevent_openssl_socket_new(
                loop.base, fd, session, BUFFEREVENT_SSL_ACCEPTING, roost_bev_opt_close_on_free())
        else { return nil }
        // Most clients close without close_notify; with a Content-Length or chunked framing
        // that truncates nothing, so it is an end of stream like TCP's, not an error.
        bufferevent_openssl_set_allow_dirty_shutdown(bev, 1)
        return bev
    }

    /// Handles the events that only TLS has; true when this one was handled.
    func tlsEvent(_ events: Int16) -> Bool {
        if events & roost_bev_event_connected() != 0 {
            machine.handshakeFinished()
            return true
        }
        guard machine.state == .handshaking else { return false }
        if events & roost_bev_event_error() != 0, let bev {
            loop.server.warnHandshakeFailure(remoteAddress, reason: Self.handshakeError(bev))
        }
        // A client gone before finishing the handshake (a port probe, say) is not worth a line.
        close(sessionFailed: true)
        return true
    }

    /// Sends close_notify once, when the session is healthy (the caller knows); nothing over
    /// plain TCP.
    func sayGoodbye() {
        guard secure, let bev, let session = bufferevent_openssl_get_ssl(bev),
            SSL_get_shutdown(session) & SSL_SENT_SHUTDOWN == 0
        else { return }
        // Best effort on a non-blocking socket; its errors must not linger in this thread's
        // queue, where libevent would read them as another connection's.
        ERR_clear_error()
        _ = SSL_shutdown(session)
        ERR_clear_error()
    }

    /// OpenSSL's reason for a failed handshake, e.g. "unsupported protocol" or "http request".
    private static func handshakeError(_ bev: OpaquePointer) -> String {
        var first: UInt = 0
        while true {
            let code = bufferevent_get_openssl_error(bev)
            if code == 0 { break }
            // libevent also queues SSL_get_error's small codes (SSL_ERROR_SSL...); skip those.
            if first == 0 && code > 0xff { first = code }
        }
        return first == 0 ? "connection failed" : TLSContext.reason(first)
    }
}
