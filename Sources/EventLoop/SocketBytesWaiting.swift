import Glibc

/// Whether a byte waits on `socket`, asked without taking it and without blocking: how a source whose library reads
/// a bounded amount per call (libdbus a few KiB, libmosquitto one packet) knows to read again before the loop sleeps.
/// One `recv(MSG_PEEK)` syscall.
public func socketHasBytesWaiting(_ socket: Int32) -> Bool {
    var byte: UInt8 = 0
    return recv(socket, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
}
