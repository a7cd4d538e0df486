#define _GNU_SOURCE
#include "roost_system.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include <malloc.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// syscall() is variadic, which Swift cannot call.
long roost_current_thread_id(void) {
#ifdef SYS_gettid
    return syscall(SYS_gettid);
#else
    return -1;
#endif
}

int roost_set_thread_nice(int nice) {
#if defined(SYS_gettid) && defined(__linux__)
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0 ? 0 : errno;
#else
    (void)nice;
    return ENOSYS;
#endif
}

void roost_set_mmap_threshold(int bytes) {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, bytes);
#endif
}

extern char **environ;

// A child starts with no signal blocked and the server's handled signals back at their defaults.
static int reset_signals(posix_spawnattr_t *attributes) {
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    int status = posix_spawnattr_setsigmask(attributes, &empty);
    if (status == 0) status = posix_spawnattr_setsigdefault(attributes, &defaults);
    if (status == 0) status = posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    return status;
}

// Spawns `path` with `actions` (already filled, or `status` not 0) and signals reset; destroys
// `actions`. The one place both spawns below share.
static int spawn_with(const char *path, char *const argv[], char *const envp[], posix_spawn_file_actions_t *actions,
                      int status, int firstClosed, int *pid) {
    posix_spawnattr_t attributes;
    int initialized = status == 0 ? posix_spawnattr_init(&attributes) : status;
    if (initialized != 0) {
        posix_spawn_file_actions_destroy(actions);
        return initialized;
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Nothing but what the actions set up: descriptors other threads open meanwhile stay here.
    status = posix_spawn_file_actions_addclosefrom_np(actions, firstClosed);
#else
    (void)firstClosed;
#endif
    if (status == 0) status = reset_signals(&attributes);
    pid_t child = 0;
    if (status == 0) status = posix_spawn(&child, path, actions, &attributes, argv, envp);
    if (status == 0) *pid = child;
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(actions);
    return status;
}

int roost_spawn(const char *path, char *const argv[], int input, int output, int error, int *pid) {
    posix_spawn_file_actions_t actions;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    int descriptors[3] = {input, output, error};
    for (int target = 0; target < 3 && status == 0; target++) {
        if (descriptors[target] >= 0) {
            status = posix_spawn_file_actions_adddup2(&actions, descriptors[target], target);
        } else {
            status = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0);
        }
    }
    return spawn_with(path, argv, environ, &actions, status, 3, pid);
}

int roost_spawn_with_channel(const char *path, char *const argv[], char *const envp[], int channel, int *pid) {
    posix_spawn_file_actions_t actions;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (status == 0) status = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    // The server's standard error is not the worker's: its words go through the channel.
    if (status == 0) status = posix_spawn_file_actions_addclose(&actions, 2);
    if (status == 0) status = posix_spawn_file_actions_adddup2(&actions, channel, 3);
    return spawn_with(path, argv, envp, &actions, status, 4, pid);
}
