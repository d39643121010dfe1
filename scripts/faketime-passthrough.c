// Loaded before libfaketime (LD_PRELOAD="this.so libfaketime.so.1"): the deadlines a process
// sets on the monotonic clock go to the C library as they are. libfaketime 0.9.10 shifts
// absolute deadlines by its fake offset even with FAKETIME_DONT_FAKE_MONOTONIC=1, so at a
// faked date NIO's timers (timerfd) and sleeps on the monotonic clock stalled for as long
// as the offset (docs: ../shared/STACK-NOTES.md). Deadlines on the wall clock still go
// through libfaketime, which turns a faked wall-clock deadline into a real one.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/timerfd.h>
#include <time.h>

enum { tracked_fds = 65536 };
// The clock each timerfd was made on, plus one (0: not made through timerfd_create).
static _Atomic unsigned char timerfd_clock[tracked_fds];

static void *libc_symbol(const char *name) {
    static void *libc;
    if (!libc) libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return libc ? dlsym(libc, name) : NULL;
}

static int monotonic(clockid_t clock) {
    return clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME || clock == CLOCK_MONOTONIC_RAW
        || clock == CLOCK_MONOTONIC_COARSE;
}

int timerfd_create(clockid_t clock, int flags) {
    static int (*real)(clockid_t, int);
    if (!real) real = (int (*)(clockid_t, int))dlsym(RTLD_NEXT, "timerfd_create");
    int fd = real(clock, flags);
    if (fd >= 0 && fd < tracked_fds) atomic_store(&timerfd_clock[fd], (unsigned char)(clock + 1));
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    typedef int (*settime)(int, int, const struct itimerspec *, struct itimerspec *);
    static settime faked, direct;
    if (!faked) faked = (settime)dlsym(RTLD_NEXT, "timerfd_settime");
    if (!direct) direct = (settime)libc_symbol("timerfd_settime");
    int clock = fd >= 0 && fd < tracked_fds ? (int)atomic_load(&timerfd_clock[fd]) - 1 : -1;
    if (direct && clock >= 0 && monotonic((clockid_t)clock)) return direct(fd, flags, value, old);
    return faked(fd, flags, value, old);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    typedef int (*sleep)(clockid_t, int, const struct timespec *, struct timespec *);
    static sleep faked, direct;
    if (!faked) faked = (sleep)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (!direct) direct = (sleep)libc_symbol("clock_nanosleep");
    if (direct && monotonic(clock)) return direct(clock, flags, request, remain);
    return faked(clock, flags, request, remain);
}

