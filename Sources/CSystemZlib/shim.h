// The system's zlib (zlib1g): raw inflate for a firmware package's deflated entries, and CRC-32.
#include <zlib.h>

/// `inflateInit2` is a macro Swift cannot call: starts a raw (headerless) inflate, as zip stores deflate.
static inline int wear2mqtt_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}
