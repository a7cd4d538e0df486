#ifndef ROOST_CLIBPQ_SHIM_H
#define ROOST_CLIBPQ_SHIM_H

#include <libpq-fe.h>
#include <errno.h>
#include <poll.h>

// The diagnostic field codes are character macros, which Swift does not import.
static inline int roost_pq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int roost_pq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }

// A notice processor that drops notices: libpq's default prints them on stderr.
static inline void roost_pq_ignore_notice(void *arg, const char *message) {
    (void)arg;
    (void)message;
}
static inline void roost_pq_silence_notices(PGconn *connection) {
    PQsetNoticeProcessor(connection, roost_pq_ignore_notice, 0);
}

// Whether the connection's socket has something to read now (an idle connection should not:
// a closed socket or a termination notice means the server went away), without waiting.
static inline int roost_pq_socket_readable(PGconn *connection) {
    struct pollfd descriptor = {.fd = PQsocket(connection), .events = POLLIN, .revents = 0};
    if (descriptor.fd < 0) return 1;
    return poll(&descriptor, 1, 0) != 0;
}

// Waits up to `milliseconds` for the connection's socket to be readable: 1 when it is, 0 on
// timeout, -1 when there is no socket or poll failed (EINTR counts as a timeout).
static inline int roost_pq_wait_readable(PGconn *connection, int milliseconds) {
    struct pollfd descriptor = {.fd = PQsocket(connection), .events = POLLIN, .revents = 0};
    if (descriptor.fd < 0) return -1;
    int ready = poll(&descriptor, 1, milliseconds);
    if (ready < 0) return errno == EINTR ? 0 : -1;
    return ready > 0 ? 1 : 0;
}

#endif
