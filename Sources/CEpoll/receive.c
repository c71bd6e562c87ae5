#define _GNU_SOURCE
#include <stddef.h>
#include <sys/socket.h>
#include "wear2mqtt_epoll.h"

int wear2mqtt_receive_datagrams(int fd, unsigned char *buffer, int slot_size, int slots, int *lengths) {
    struct mmsghdr messages[32];
    struct iovec vectors[32];
    if (slots > 32) slots = 32;
    for (int i = 0; i < slots; i++) {
        vectors[i].iov_base = buffer + (long)i * slot_size;
        vectors[i].iov_len = (size_t)slot_size;
        messages[i].msg_hdr = (struct msghdr){ .msg_iov = &vectors[i], .msg_iovlen = 1 };
        messages[i].msg_len = 0;
    }
    int count = recvmmsg(fd, messages, (unsigned int)slots, MSG_DONTWAIT, NULL);
    // A closed peer reads as an empty message, and recvmmsg keeps reading it into every slot left: the datagrams
    // before the first empty one are answered now, the end (0) by the next call.
    for (int i = 0; i < count; i++) {
        if (messages[i].msg_len == 0) return i;
        lengths[i] = (int)messages[i].msg_len;
    }
    return count;
}
