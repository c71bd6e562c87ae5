import MQTT
