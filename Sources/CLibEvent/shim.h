#ifndef ROOST_CLIBEVENT_SHIM_H
#define ROOST_CLIBEVENT_SHIM_H

// libevent's event-config.h defines _GNU_SOURCE. Including a system header first settles glibc's
// feature macros without it, as in the other modules (Dispatch, Glibc); otherwise this module's
// fd_set differs from theirs and a clean build fails with "fds_bits ... not present".
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>

#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>


// Swift cannot import these as constants because they are macros built from expressions.
static inline short roost_ev_read(void) { return EV_READ; }
static inline short roost_ev_write(void) { return EV_WRITE; }
static inline short roost_ev_persist(void) { return EV_PERSIST; }
static inline short roost_ev_timeout(void) { return EV_TIMEOUT; }

static inline unsigned roost_lev_opt_close_on_exec(void) { return LEV_OPT_CLOSE_ON_EXEC; }
static inline int roost_bev_opt_close_on_free(void) { return BEV_OPT_CLOSE_ON_FREE; }

static inline short roost_bev_event_eof(void) { return BEV_EVENT_EOF; }
static inline short roost_bev_event_error(void) { return BEV_EVENT_ERROR; }
static inline short roost_bev_event_timeout(void) { return BEV_EVENT_TIMEOUT; }

#endif
