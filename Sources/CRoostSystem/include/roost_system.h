#ifndef ROOST_SYSTEM_H
#define ROOST_SYSTEM_H

/// The kernel's id of the calling thread (Linux), for per-thread scheduling settings.
long roost_current_thread_id(void);

/// Makes glibc serve allocations of at least `bytes` with mmap, and return them to the system when
/// freed, with a fixed threshold (glibc otherwise raises it after the first large free).
void roost_set_mmap_threshold(int bytes);

#endif
