#ifndef ROOST_COPENSSL_SHIM_H
#define ROOST_COPENSSL_SHIM_H

// As in CLibEvent: system headers first, so glibc's feature macros are settled before libevent's
// event-config.h defines _GNU_SOURCE.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

// Swift cannot call these: OpenSSL defines them as macros over SSL_CTX_ctrl, or their constants
// as expressions.

static inline int roost_ssl_ctx_set_protocols(SSL_CTX *context, int minimum, int maximum) {
    return SSL_CTX_set_min_proto_version(context, minimum) && SSL_CTX_set_max_proto_version(context, maximum);
}

/// No renegotiation (a client could make the server redo handshakes at will), no compression,
/// a client that closes without close_notify is an end of stream rather than an error, and
/// buffers of idle connections are freed.
static inline void roost_ssl_ctx_set_server_options(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(context, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_dh_auto(context, 1);
}

static inline int roost_ssl_ctx_set_groups(SSL_CTX *context, const char *groups) {
    return (int)SSL_CTX_set1_groups_list(context, groups);
}

static inline void roost_ssl_ctx_set_session_cache(SSL_CTX *context, long entries) {
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(context, entries);
}

/// An encrypted key must never make OpenSSL prompt on the terminal: it fails to load instead.
static int roost_no_passphrase(char *buffer, int size, int rwflag, void *userdata) {
    (void)buffer; (void)size; (void)rwflag; (void)userdata;
    return 0;
}

static inline void roost_ssl_ctx_refuse_passphrases(SSL_CTX *context) {
    SSL_CTX_set_default_passwd_cb(context, roost_no_passphrase);
}

/// ALPN: HTTP/1.1 is the only protocol spoken; a client that offers others but not it is refused
/// with no_application_protocol (RFC 7301), one that offers none goes on without ALPN.
static int roost_select_http11(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                               const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    static const unsigned char supported[] = "\x08http/1.1";
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, supported, sizeof(supported) - 1, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

static inline void roost_ssl_ctx_select_http11(SSL_CTX *context) {
    SSL_CTX_set_alpn_select_cb(context, roost_select_http11, NULL);
}

static inline short roost_bev_event_connected(void) { return BEV_EVENT_CONNECTED; }

#endif
