#ifndef WEAR2MQTT_CEPOLL_SHIM_H
#define WEAR2MQTT_CEPOLL_SHIM_H
// Linux's epoll and eventfd, which Glibc's Swift module does not export, and the calling thread's name (prctl is
// variadic, so Swift cannot call it directly).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

static inline int wear2mqtt_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, name, 0, 0, 0);
}
#endif
