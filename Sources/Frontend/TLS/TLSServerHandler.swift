import CTLS
import NIOCore

/// HTTPS for one connection of the web interface: the socket's ciphertext goes into OpenSSL through a memory BIO and
/// what OpenSSL writes goes out on the socket, so the handlers after this one (HTTP, the WebSocket) see plaintext and
/// OpenSSL never touches the file descriptor. Writes made before the handshake ends wait for it. A handshake that
/// fails (a plain-HTTP request on the HTTPS port, a client that trusts nothing we offer) closes the connection after
/// OpenSSL's alert. Confined to the channel's event loop, as every handler is.
final class TLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let connection: OpaquePointer
    /// Ciphertext from the socket, read by OpenSSL (owned by `connection`).
    private let fromSocket: OpaquePointer
    /// Ciphertext OpenSSL wrote, for the socket (owned by `connection`).
    private let toSocket: OpaquePointer
    private var handshakeDone = false
    private var closing = false
    private var waitingWrites: [(ByteBuffer, EventLoopPromise<Void>?)] = []

    init(context: TLSServerContext) {
        connection = SSL_new(context.context)!
        fromSocket = BIO_new(BIO_s_mem())!
        toSocket = BIO_new(BIO_s_mem())!
        SSL_set_bio(connection, fromSocket, toSocket)
        SSL_set_accept_state(connection)
    }

    deinit { SSL_free(connection) }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ciphertext = unwrapInboundIn(data)
        ciphertext.withUnsafeReadableBytes { bytes in
            // A memory BIO takes everything (it grows).
            _ = BIO_write(fromSocket, bytes.baseAddress, Int32(bytes.count))
        }
        if !handshakeDone {
            ERR_clear_error()
            let result = SSL_do_handshake(connection)
            if result == 1 {
                handshakeDone = true
            } else if !wantsMore(result) {
                let reason = TLSServerContext.lastError()
                sendCiphertext(context: context, promise: nil)
                context.flush()
                fail(context: context, Failure(description: "TLS handshake failed: \(reason)"))
                return
            }
            sendCiphertext(context: context, promise: nil)
            context.flush()
            guard handshakeDone else { return }
            let writes = waitingWrites
            waitingWrites = []
            for (plaintext, promise) in writes { encrypt(plaintext, promise: promise, context: context) }
            if !writes.isEmpty { context.flush() }
        }
        decrypt(context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let plaintext = unwrapOutboundIn(data)
        guard handshakeDone else {
            waitingWrites.append((plaintext, promise))
            return
        }
        encrypt(plaintext, promise: promise, context: context)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if mode == .all, handshakeDone, !closing {
            closing = true
            // close_notify, so the browser knows the response ended here and was not cut.
            ERR_clear_error()
            _ = SSL_shutdown(connection)
            sendCiphertext(context: context, promise: nil)
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let writes = waitingWrites
        waitingWrites = []
        for (_, promise) in writes { promise?.fail(ChannelError.ioOnClosedChannel) }
        context.fireChannelInactive()
    }

    /// Plaintext for the handlers after this one, as long as OpenSSL has whole records of it (the socket's own
    /// read-complete follows and passes through).
    private func decrypt(context: ChannelHandlerContext) {
        while true {
            var result: Int32 = 0
            var plaintext = context.channel.allocator.buffer(capacity: 16 * 1024)
            plaintext.writeWithUnsafeMutableBytes(minimumWritableBytes: 16 * 1024) { space in
                result = SSL_read(connection, space.baseAddress, Int32(space.count))
                return result > 0 ? Int(result) : 0
            }
            if result > 0 {
                context.fireChannelRead(wrapInboundOut(plaintext))
                continue
            }
            let error = SSL_get_error(connection, result)
            // TLS 1.3 session tickets and alerts OpenSSL wrote while reading.
            sendCiphertext(context: context, promise: nil)
            context.flush()
            if error == SSL_ERROR_ZERO_RETURN {
                // The browser's close_notify.
                context.close(promise: nil)
            } else if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE {
                fail(context: context, Failure(description: "TLS read failed: \(TLSServerContext.lastError())"))
            }
            break
        }
    }

    private func encrypt(_ plaintext: ByteBuffer, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        var remaining = plaintext
        while remaining.readableBytes > 0 {
            ERR_clear_error()
            let written = remaining.withUnsafeReadableBytes { bytes in
                SSL_write(connection, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
            }
            guard written > 0 else {
                let failure = Failure(description: "TLS write failed: \(TLSServerContext.lastError())")
                promise?.fail(failure)
                fail(context: context, failure)
                return
            }
            remaining.moveReaderIndex(forwardBy: Int(written))
        }
        sendCiphertext(context: context, promise: promise)
    }

    /// Writes what OpenSSL has for the socket; `promise` completes with that write (at once when there is none).
    private func sendCiphertext(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        let pending = Int(wear2mqtt_tls_pending_output(toSocket))
        guard pending > 0 else {
            promise?.succeed(())
            return
        }
        var ciphertext = context.channel.allocator.buffer(capacity: pending)
        ciphertext.writeWithUnsafeMutableBytes(minimumWritableBytes: pending) { space in
            Int(max(0, BIO_read(toSocket, space.baseAddress, Int32(pending))))
        }
        context.write(wrapOutboundOut(ciphertext), promise: promise)
    }

    private func wantsMore(_ result: Int32) -> Bool {
        let error = SSL_get_error(connection, result)
        return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE
    }

    private func fail(context: ChannelHandlerContext, _ failure: Failure) {
        context.fireErrorCaught(failure)
        context.close(promise: nil)
    }
}
