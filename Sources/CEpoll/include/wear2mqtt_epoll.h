#ifndef WEAR2MQTT_EPOLL_H
#define WEAR2MQTT_EPOLL_H
// Linux's epoll and eventfd, which Glibc's Swift module does not export; the calling thread's name (prctl is
// variadic, so Swift cannot call it directly); recvmmsg, a GNU extension Glibc's module leaves out (receive.c).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

static inline int wear2mqtt_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}

/// Reads up to `slots` (at most 32) datagrams waiting on `fd` in one recvmmsg, without blocking: datagram i lands
/// at `buffer + i * slot_size`, its length in `lengths[i]` (cut to `slot_size`). Answers how many were read, 0 when
/// the peer closed the socket, -1 with errno set (EAGAIN: none waiting).
int wear2mqtt_receive_datagrams(int fd, unsigned char *buffer, int slot_size, int slots, int *lengths);
#endif
