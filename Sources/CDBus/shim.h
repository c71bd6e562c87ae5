#ifndef WEAR2MQTT_CDBUS_SHIM_H
#define WEAR2MQTT_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
