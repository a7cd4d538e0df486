#define _GNU_SOURCE
#include "roost_system.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#endif

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#if defined(__x86_64__)
#define ROOST_AUDIT_ARCH AUDIT_ARCH_X86_64
#else
#define ROOST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

// A filter program built instruction by instruction, so jumps are counted by the code, not by hand.
struct program {
    struct sock_filter code[160];
    unsigned short count;
};

static void add(struct program *p, struct sock_filter instruction) {
    if (p->count < sizeof(p->code) / sizeof(p->code[0])) p->code[p->count++] = instruction;
}

static void load_number(struct program *p) {
    add(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
}

static void allow(struct program *p, uint32_t number) {
    add(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, number, 0, 1));
    add(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
}

// The argument's low 32 bits (both architectures are little-endian).
static void load_argument(struct program *p, int index) {
    add(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[index])));
}

// `number` only when its first argument is `descriptor`; on another descriptor, EPERM.
static void allow_on_descriptor(struct program *p, uint32_t number, uint32_t descriptor) {
    add(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, number, 0, 4));
    load_argument(p, 0);
    add(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, descriptor, 0, 1));
    add(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    add(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
}

// `number` only when its protection argument (index 2) does not ask for executable memory.
static void allow_without_exec(struct program *p, uint32_t number) {
    add(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, number, 0, 4));
    load_argument(p, 2);
    add(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_EXEC, 1, 0));
    add(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    add(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
}

// What the worker's loop does once it runs (found with strace over loads, calls, logs, memory
// bombs and deep recursion): its channel's reads and sends, memory, and ending. Anything else
// fails with EPERM; another architecture's calling convention kills the process.
static int apply_filter(int channel) {
    struct program p = {.count = 0};
    add(&p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    add(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROOST_AUDIT_ARCH, 1, 0));
    add(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
    load_number(&p);
#if defined(__x86_64__)
    // x32 system calls share the architecture's tag: refuse them by their number's bit.
    add(&p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1));
    add(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    allow_on_descriptor(&p, __NR_read, (uint32_t)channel);
    allow_on_descriptor(&p, __NR_write, (uint32_t)channel);
    allow_on_descriptor(&p, __NR_sendto, (uint32_t)channel);
    allow_on_descriptor(&p, __NR_recvfrom, (uint32_t)channel);
    allow_on_descriptor(&p, __NR_close, (uint32_t)channel);
#ifdef __NR_poll
    allow(&p, __NR_poll);
#endif
    allow(&p, __NR_ppoll);
    allow(&p, __NR_brk);
    allow_without_exec(&p, __NR_mmap);
    allow_without_exec(&p, __NR_mprotect);
    allow(&p, __NR_munmap);
    allow(&p, __NR_mremap);
    allow(&p, __NR_madvise);
    allow(&p, __NR_futex);
    allow(&p, __NR_clock_gettime);
    allow(&p, __NR_clock_getres);
    allow(&p, __NR_gettimeofday);
    allow(&p, __NR_getrandom);
    allow(&p, __NR_getpid);
    allow(&p, __NR_gettid);
    allow(&p, __NR_sched_yield);
    allow(&p, __NR_rt_sigreturn);
    allow(&p, __NR_rt_sigprocmask);
    allow(&p, __NR_restart_syscall);
    allow(&p, __NR_exit);
    allow(&p, __NR_exit_group);
    add(&p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
    if (p.count >= sizeof(p.code) / sizeof(p.code[0])) return E2BIG;
    struct sock_fprog program = {.len = p.count, .filter = p.code};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0 ? 0 : errno;
}
#endif

int roost_worker_sandbox(long uid, long gid, unsigned long long addressSpace, int channel) {
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
    if (addressSpace > 0) {
        struct rlimit limit = {.rlim_cur = (rlim_t)addressSpace, .rlim_max = (rlim_t)addressSpace};
        if (setrlimit(RLIMIT_AS, &limit) != 0) return errno;
    }
    if (uid >= 0) {
        if (setgroups(0, NULL) != 0) return errno;
        if (setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0) return errno;
        if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) return errno;
        if (getuid() != (uid_t)uid || geteuid() != (uid_t)uid || getgid() != (gid_t)gid) return EPERM;
        // Back to root must be impossible now.
        if (uid != 0 && setuid(0) == 0) return EPERM;
        // A change of credentials clears the parent-death signal: set it again.
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return errno;
        if (getppid() == 1) return ESRCH;
    }
    // Nothing goes to the server's standard error: the worker's words go through its channel.
    close(2);
    return apply_filter(channel);
#else
    (void)uid;
    (void)gid;
    (void)addressSpace;
    (void)channel;
    return ENOSYS;
#endif
}
