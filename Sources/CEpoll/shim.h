#ifndef WEAR2MQTT_CEPOLL_SHIM_H
#define WEAR2MQTT_CEPOLL_SHIM_H
// Linux's epoll and eventfd, which Glibc's Swift module does not export.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
