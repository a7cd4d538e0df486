#ifndef ROOST_CDUKTAPE_SHIM_H
#define ROOST_CDUKTAPE_SHIM_H

// What Swift cannot do well with Duktape: a counting allocator, a fatal handler, the native
// functions scripts call (Duktape errors longjmp, so only C frames may lie between a throw and
// its catch), and protected entry points that never let an error escape into Swift.

#include <duktape.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

/// The host's answer to a script's request: malloc'd bytes (NULL = undefined). The callback runs
/// outside Duktape and must not call it.
typedef char *_Nullable (*roost_duk_host_callback)(
    void *_Nullable owner, const char *_Nonnull op, size_t op_length, const char *_Nullable first,
    size_t first_length, const char *_Nullable second, size_t second_length, size_t *_Nonnull answer_length);

/// One heap's allocator account and host hooks (the heap's udata).
typedef struct roost_duk_host {
    size_t used;
    size_t limit;
    /// Set when an allocation was refused for the limit (cleared by the host).
    int refused;
    roost_duk_host_callback _Nullable callback;
    void *_Nullable owner;
    /// The last answer, kept until the next request in case pushing it threw.
    char *_Nullable pending;
} roost_duk_host;

// Every block carries its size in a header, so frees and reallocs keep the count exact.
#define ROOST_DUK_HEADER 16

static inline void *_Nullable roost_duk_alloc(void *_Nullable udata, duk_size_t size) {
    roost_duk_host *host = (roost_duk_host *)udata;
    if (size == 0) return NULL;
    if (host->limit != 0 && (size > host->limit || host->used > host->limit - size)) {
        host->refused = 1;
        return NULL;
    }
    char *block = (char *)malloc(size + ROOST_DUK_HEADER);
    if (block == NULL) {
        host->refused = 1;
        return NULL;
    }
    *(size_t *)block = size;
    host->used += size;
    return block + ROOST_DUK_HEADER;
}

static inline void roost_duk_free(void *_Nullable udata, void *_Nullable pointer) {
    roost_duk_host *host = (roost_duk_host *)udata;
    if (pointer == NULL) return;
    char *block = (char *)pointer - ROOST_DUK_HEADER;
    host->used -= *(size_t *)block;
    free(block);
}

static inline void *_Nullable roost_duk_realloc(void *_Nullable udata, void *_Nullable pointer, duk_size_t size) {
    roost_duk_host *host = (roost_duk_host *)udata;
    if (pointer == NULL) return roost_duk_alloc(udata, size);
    if (size == 0) {
        roost_duk_free(udata, pointer);
        return NULL;
    }
    char *block = (char *)pointer - ROOST_DUK_HEADER;
    size_t old = *(size_t *)block;
    if (size > old && host->limit != 0 && (size - old > host->limit || host->used > host->limit - (size - old))) {
        host->refused = 1;
        return NULL;
    }
    char *grown = (char *)realloc(block, size + ROOST_DUK_HEADER);
    if (grown == NULL) {
        host->refused = 1;
        return NULL;
    }
    *(size_t *)grown = size;
    host->used = host->used - old + size;
    return grown + ROOST_DUK_HEADER;
}

/// An error no protected call caught: the heap is unusable, so the process goes.
static inline void roost_duk_fatal(void *_Nullable udata, const char *_Nullable message) {
    (void)udata;
    static const char prefix[] = "roost script-worker: fatal JavaScript engine error: ";
    ssize_t ignored = write(2, prefix, sizeof(prefix) - 1);
    if (message != NULL) {
        size_t length = strnlen(message, 200);
        ignored = write(2, message, length);
    }
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(3);
}

static inline duk_context *_Nullable roost_duk_create_heap(roost_duk_host *_Nonnull host) {
    return duk_create_heap(roost_duk_alloc, roost_duk_realloc, roost_duk_free, host, roost_duk_fatal);
}

static inline roost_duk_host *_Nonnull roost_duk_host_of(duk_context *_Nonnull context) {
    duk_memory_functions functions;
    duk_get_memory_functions(context, &functions);
    return (roost_duk_host *)functions.udata;
}

/// `host(op, first, second)`: asks the Swift side (log, call, module source); returns a string or
/// undefined. Arguments other than undefined are coerced to strings.
static inline duk_ret_t roost_duk_host_native(duk_context *_Nonnull context) {
    roost_duk_host *host = roost_duk_host_of(context);
    duk_size_t op_length = 0, first_length = 0, second_length = 0;
    const char *op = duk_require_lstring(context, 0, &op_length);
    const char *first = duk_is_undefined(context, 1) ? NULL : duk_to_lstring(context, 1, &first_length);
    const char *second = duk_is_undefined(context, 2) ? NULL : duk_to_lstring(context, 2, &second_length);
    free(host->pending);
    host->pending = NULL;
    if (host->callback == NULL) return 0;
    size_t answer_length = 0;
    host->pending = host->callback(host->owner, op, op_length, first, first_length, second, second_length,
                                   &answer_length);
    if (host->pending == NULL) return 0;
    duk_push_lstring(context, host->pending, answer_length);
    free(host->pending);
    host->pending = NULL;
    return 1;
}

/// `compile(source, fileName, asFunction)`: a function expression's function, or a global
/// program as a function returning its completion value. A SyntaxError is thrown in JavaScript.
static inline duk_ret_t roost_duk_compile_native(duk_context *_Nonnull context) {
    duk_bool_t as_function = duk_to_boolean(context, 2);
    duk_set_top(context, 2);
    duk_require_string(context, 0);
    duk_require_string(context, 1);
    duk_compile(context, as_function ? DUK_COMPILE_FUNCTION : 0);
    return 1;
}

/// What a protected entry runs: the prelude's text, file name and argument (install), or the
/// driver's request name in `file_name` and its payload in `argument` (drive).
typedef struct roost_duk_source {
    const char *_Nonnull text;
    size_t length;
    const char *_Nonnull file_name;
    const char *_Nullable argument;
    size_t argument_length;
} roost_duk_source;

// The prelude is a function expression taking (host, compile, argument); it returns the driver,
// kept in the global stash where scripts cannot reach it.
static inline duk_ret_t roost_duk_install_unsafe(duk_context *_Nonnull context, void *_Nullable udata) {
    roost_duk_source *source = (roost_duk_source *)udata;
    duk_push_global_stash(context);
    duk_push_lstring(context, source->text, source->length);
    duk_push_string(context, source->file_name);
    duk_compile(context, DUK_COMPILE_FUNCTION);
    duk_push_c_function(context, roost_duk_host_native, 3);
    duk_push_c_function(context, roost_duk_compile_native, 3);
    duk_push_lstring(context, source->argument, source->argument_length);
    duk_call(context, 3);
    duk_put_prop_string(context, -2, "roostDriver");
    duk_pop(context);
    return 0;
}

static inline duk_ret_t roost_duk_drive_unsafe(duk_context *_Nonnull context, void *_Nullable udata) {
    roost_duk_source *source = (roost_duk_source *)udata;
    duk_push_global_stash(context);
    duk_get_prop_string(context, -1, "roostDriver");
    duk_push_string(context, source->file_name);
    duk_push_lstring(context, source->argument, source->argument_length);
    duk_call(context, 2);
    duk_to_string(context, -1);
    return 1;
}

/// Copies the string on top of the stack (or its safe coercion) into malloc'd memory and pops it.
static inline void roost_duk_take_top(duk_context *_Nonnull context, char *_Nullable *_Nonnull answer,
                                      size_t *_Nonnull answer_length) {
    duk_size_t length = 0;
    const char *text = duk_safe_to_lstring(context, -1, &length);
    *answer = (char *)malloc(length + 1);
    if (*answer != NULL) {
        memcpy(*answer, text, length);
        (*answer)[length] = 0;
        *answer_length = length;
    }
    duk_pop(context);
}

/// Runs the prelude in a fresh heap. 0 on success; otherwise the error's text is in `answer`.
static inline duk_int_t roost_duk_install(duk_context *_Nonnull context, roost_duk_source *_Nonnull source,
                                          char *_Nullable *_Nonnull answer, size_t *_Nonnull answer_length) {
    *answer = NULL;
    *answer_length = 0;
    duk_int_t status = duk_safe_call(context, roost_duk_install_unsafe, source, 0, 1);
    if (status != DUK_EXEC_SUCCESS) {
        roost_duk_take_top(context, answer, answer_length);
    } else {
        duk_pop(context);
    }
    return status;
}

/// Calls the driver with (request, argument): its string answer, or the error's text.
static inline duk_int_t roost_duk_drive(duk_context *_Nonnull context, roost_duk_source *_Nonnull source,
                                        char *_Nullable *_Nonnull answer, size_t *_Nonnull answer_length) {
    *answer = NULL;
    *answer_length = 0;
    duk_int_t status = duk_safe_call(context, roost_duk_drive_unsafe, source, 0, 1);
    roost_duk_take_top(context, answer, answer_length);
    return status;
}

/// Frees what roost_duk_host_native may have left behind, after the heap is destroyed.
static inline void roost_duk_host_release(roost_duk_host *_Nonnull host) {
    free(host->pending);
    host->pending = NULL;
}

/// The worker process's cheap hardening: no privilege gain through exec, no inherited descriptors
/// but 0-3, and a closed peer is an error rather than SIGPIPE.
static inline void roost_worker_harden(void) {
    (void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    // A server killed with SIGKILL takes its workers along, even one stuck in an endless loop.
    // (The signal comes when the spawning thread ends: the pool's threads live as long as the
    // pool and kill their workers first.) A server gone before this line closed the channel, so
    // the worker's first read ends it.
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    signal(SIGPIPE, SIG_IGN);
#if defined(SYS_close_range)
    if (syscall(SYS_close_range, 4U, ~0U, 0U) == 0) return;
#endif
    long last = sysconf(_SC_OPEN_MAX);
    if (last < 0 || last > 65536) last = 65536;
    for (long descriptor = 4; descriptor < last; descriptor++) close((int)descriptor);
}

#endif
