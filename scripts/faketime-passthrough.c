// Loaded before libfaketime (LD_PRELOAD="this.so libfaketime.so.1"): the deadlines a process
// sets on the monotonic clock go to the C library as they are. libfaketime 0.9.10 shifts
// absolute deadlines by its fake offset even with FAKETIME_DONT_FAKE_MONOTONIC=1, so at a
// faked date NIO's timers (timerfd) and sleeps on the monotonic clock stalled for as long
// as the offset (the project's STACK-NOTES, "time, signatures, object storage"). Deadlines on
// the wall clock still go through libfaketime, which turns a faked wall-clock deadline into a
// real one. Not passed through: pthread_cond_timedwait (libfaketime shifts it too, but nothing
// the service runs was seen to wait on a monotonic condition variable).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <sys/timerfd.h>
#include <time.h>

typedef int (*timerfd_create_fn)(clockid_t, int);
typedef int (*timerfd_settime_fn)(int, int, const struct itimerspec *, struct itimerspec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

// Resolved once, before the program runs (a constructor: no thread races to fill them):
// `next_*` is libfaketime's (the next library in the search order), `libc_*` the C library's.
static timerfd_create_fn next_timerfd_create;
static timerfd_settime_fn next_timerfd_settime, libc_timerfd_settime;
static clock_nanosleep_fn next_clock_nanosleep, libc_clock_nanosleep;

enum { tracked_fds = 65536 };
// The clock each timerfd was made on, plus one (0: not made through timerfd_create).
static _Atomic unsigned char timerfd_clock[tracked_fds];

__attribute__((constructor)) static void resolve(void) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    next_timerfd_create = (timerfd_create_fn)dlsym(RTLD_NEXT, "timerfd_create");
    next_timerfd_settime = (timerfd_settime_fn)dlsym(RTLD_NEXT, "timerfd_settime");
    next_clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT, "clock_nanosleep");
    if (libc) {
        libc_timerfd_settime = (timerfd_settime_fn)dlsym(libc, "timerfd_settime");
        libc_clock_nanosleep = (clock_nanosleep_fn)dlsym(libc, "clock_nanosleep");
    }
}

static int monotonic(clockid_t clock) {
    return clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME || clock == CLOCK_MONOTONIC_RAW
        || clock == CLOCK_MONOTONIC_COARSE;
}

int timerfd_create(clockid_t clock, int flags) {
    if (!next_timerfd_create) resolve();
    int fd = next_timerfd_create(clock, flags);
    if (fd >= 0 && fd < tracked_fds) atomic_store(&timerfd_clock[fd], (unsigned char)(clock + 1));
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    if (!next_timerfd_settime) resolve();
    int clock = fd >= 0 && fd < tracked_fds ? (int)atomic_load(&timerfd_clock[fd]) - 1 : -1;
    if (libc_timerfd_settime && clock >= 0 && monotonic((clockid_t)clock)) return libc_timerfd_settime(fd, flags, value, old);
    return next_timerfd_settime(fd, flags, value, old);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    if (!next_clock_nanosleep) resolve();
    if (libc_clock_nanosleep && monotonic(clock)) return libc_clock_nanosleep(clock, flags, request, remain);
    return next_clock_nanosleep(clock, flags, request, remain);
}
