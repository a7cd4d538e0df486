#ifndef ROOST_SYSTEM_H
#define ROOST_SYSTEM_H

/// The kernel's id of the calling thread (Linux), for per-thread scheduling settings.
long roost_current_thread_id(void);

/// Sets the calling thread's nice value (Linux: per thread); 0, or an errno value (EACCES when
/// an unprivileged process asks for a higher priority than it has).
int roost_set_thread_nice(int nice);

/// Makes glibc serve allocations of at least `bytes` with mmap, and return them to the system when
/// freed, with a fixed threshold (glibc otherwise raises it after the first large free).
void roost_set_mmap_threshold(int bytes);

/// Starts `path` with `argv` (NULL-terminated) and this process's environment. The child's standard
/// input, output and error are the given descriptors (-1 for /dev/null); every other descriptor is
/// closed in the child, and signal handling starts from the defaults. Returns 0 and sets `pid`, or
/// returns an errno value. Written in C because Foundation's Process copies the descriptor table
/// while other threads open and close descriptors, which crashes under load.
int roost_spawn(const char *path, char *const argv[], int input, int output, int error, int *pid);

/// Starts a helper process such as a script worker: `channel` becomes its descriptor 3, standard
/// input and output are /dev/null, standard error is closed, every other descriptor is
/// closed, and its environment is exactly `envp` (so no secret in the server's environment, such
/// as a database password, reaches it). Returns 0 and sets `pid`, or an errno value.
int roost_spawn_with_channel(const char *path, char *const argv[], char *const envp[], int channel, int *pid);

/// A script worker's confinement, applied by the worker itself before it serves any frame: caps
/// its address space at `addressSpace` bytes (0: no cap), drops to `uid`/`gid` with no
/// supplementary groups when `uid` is not negative (and checks it cannot return), closes its
/// standard error, and installs a seccomp filter that allows only reads and sends on `channel`,
/// memory management, clocks and exit (other calls fail with EPERM). 0, or an errno value: the
/// worker must not run scripts then. Linux on x86-64 and arm64 only (ENOSYS elsewhere).
int roost_worker_sandbox(long uid, long gid, unsigned long long addressSpace, int channel);

#endif
