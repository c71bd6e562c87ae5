// Tells ThreadSanitizer about a hand-over inside Swift's runtime that it cannot see, because that library is not
// instrumented; preloaded into every process of a ThreadSanitizer run by Tests/sanitizers/run (docs/reliability.md,
// Sanitizers). Nothing is suppressed: an access outside the lock is still reported (checked with a deliberately
// racy program, docs/reliability.md). In a process without ThreadSanitizer (mosquitto, dbus-daemon) the weak hooks
// are absent and only the real functions run.
//
// A contended Synchronization.Mutex (stdlib/public/Synchronization/Mutex/LinuxImpl.swift). The uncontended lock
// and unlock are compare-exchanges inlined into our instrumented code, seen as an acquire / release of the lock
// word. Contended, the inlined code calls _MutexHandle._lockSlow / _unlockSlow in libswiftSynchronization.so:
// _lockSlow spins on its own compare-exchange, then has the kernel wait (syscall(SYS_futex, word,
// FUTEX_LOCK_PI_PRIVATE)); _unlockSlow has the kernel hand the lock to the waiter (FUTEX_UNLOCK_PI_PRIVATE),
// per objdump -d of the 6.3.1 toolchain's library. Two critical sections of one mutex on two threads were
// reported as "Swift access race" inside withLock. Here: an acquire of the lock word after _lockSlow, a release
// before _unlockSlow. Swift passes the handle's address, the lock word, as `self` (swiftself: swift_context in
// clang, r13 on x86_64).
//
// Both functions are exported (@usableFromInline) and our code calls them through the PLT, so the two below, of
// the same names, stand in for them and call the real ones.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>

void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

#define SWIFT_CALL __attribute__((swiftcall))
#define SWIFT_SELF __attribute__((swift_context))
#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef SWIFT_CALL void (*LockSlow)(uint32_t threadID, void *SWIFT_SELF handle);
typedef SWIFT_CALL void (*UnlockSlow)(void *SWIFT_SELF handle);

SWIFT_CALL void lock_slow(uint32_t threadID, void *SWIFT_SELF handle) __asm__(LOCK_SLOW);
SWIFT_CALL void unlock_slow(void *SWIFT_SELF handle) __asm__(UNLOCK_SLOW);

SWIFT_CALL void lock_slow(uint32_t threadID, void *SWIFT_SELF handle) {
    static LockSlow real;
    if (!real) real = (LockSlow)dlsym(RTLD_NEXT, LOCK_SLOW);
    real(threadID, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFT_CALL void unlock_slow(void *SWIFT_SELF handle) {
    static UnlockSlow real;
    if (!real) real = (UnlockSlow)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    if (__tsan_release) __tsan_release(handle);
    real(handle);
}
