#include "roost_system.h"

#include <malloc.h>
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

void roost_set_mmap_threshold(int bytes) {
#ifdef M_MMAP_THRESHOLD
    mallopt(M_MMAP_THRESHOLD, bytes);
#endif
}
