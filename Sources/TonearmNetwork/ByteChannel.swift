// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// A connected byte stream to a server: plain TCP (``TCPChannel``) or TLS over it. The HTTP
/// client speaks through this and nothing else.
///
/// Threading: one thread reads and writes (a source's fetch thread); ``cancel()`` may be called
/// from any other thread and makes a blocked or later `read` / `write` throw
/// ``NetworkFailure/connectionFailed(detail:)`` ("cancelled") at once.
package protocol ByteChannel: AnyObject, Sendable {
    /// Reads at most `buffer.count` bytes, waiting at most `timeout` seconds for the first one.
    /// Returns 0 at the end of the stream (the server closed it).
    func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Double) throws(NetworkFailure) -> Int
    /// Writes all of `bytes`, waiting at most `timeout` seconds in all.
    func write(_ bytes: [UInt8], timeout: Double) throws(NetworkFailure)
    /// Makes a blocked or later read or write fail at once (any thread).
    func cancel()
    /// Releases the connection (the reading thread, after the last read).
    func close()
}

/// A TCP connection over a non-blocking socket; every wait is a `poll` with a timeout, and
/// ``cancel()`` shuts the socket down so that the poll returns.
package final class TCPChannel: ByteChannel, @unchecked Sendable {
    /// The socket (non-blocking), for a TLS layer on top.
    package let fd: Int32
    private let cancelled = AtomicFlag()
    private let closed = AtomicFlag()

    private init(fd: Int32) { self.fd = fd }

    deinit { close() }

    /// Resolves `host` and connects to `port`, trying each address in turn, within `timeout`
    /// seconds in all. Throws ``NetworkFailure/hostNotFound(host:detail:)``,
    /// ``NetworkFailure/connectionRefused(host:port:)``, ``NetworkFailure/timedOut(phase:seconds:)``
    /// or ``NetworkFailure/connectionFailed(detail:)``.
    package static func connect(host: String, port: Int, timeout: Double) throws(NetworkFailure) -> TCPChannel {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else {
            throw .hostNotFound(host: host, detail: String(cString: gai_strerror(rc)))
        }
        defer { freeaddrinfo(first) }
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: NetworkFailure = .connectionFailed(detail: "no address for \(host)")
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let a = node {
            node = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                            a.pointee.ai_protocol)
            guard fd >= 0 else { lastError = .connectionFailed(detail: "socket: \(errnoText())"); continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return TCPChannel(fd: fd) }
            guard errno == EINPROGRESS else {
                lastError = errno == ECONNREFUSED ? .connectionRefused(host: host, port: port) : .connectionFailed(detail: errnoText())
                Glibc.close(fd)
                continue
            }
            let left = deadline.timeIntervalSinceNow
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let n = left > 0 ? poll(&p, 1, Int32(left * 1000)) : 0
            if n == 0 {
                Glibc.close(fd)
                throw .timedOut(phase: "connecting to \(host) port \(port)", seconds: timeout)
            }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            if n > 0 && err == 0 { return TCPChannel(fd: fd) }
            lastError = err == ECONNREFUSED ? .connectionRefused(host: host, port: port) : .connectionFailed(detail: String(cString: strerror(err)))
            Glibc.close(fd)
        }
        throw lastError
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Double) throws(NetworkFailure) -> Int {
        guard !buffer.isEmpty else { return 0 }
        try waitFor(Int16(POLLIN), timeout: timeout, phase: "waiting for data")
        while true {
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 {
                if cancelled.isSet { throw .connectionFailed(detail: "cancelled") }
                return n
            }
            if errno == EINTR { continue }
            if errno == EAGAIN { try waitFor(Int16(POLLIN), timeout: timeout, phase: "waiting for data"); continue }
            throw .connectionFailed(detail: errnoText())
        }
    }

    package func write(_ bytes: [UInt8], timeout: Double) throws(NetworkFailure) {
        var offset = 0
        while offset < bytes.count {
            try waitFor(Int16(POLLOUT), timeout: timeout, phase: "sending the request")
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .connectionFailed(detail: errnoText())
            }
            offset += n
        }
    }

    /// Waits until the socket can be read (`POLLIN`) or written (`POLLOUT`), at most `timeout`
    /// seconds; throws on timeout (naming `phase`) or cancellation.
    package func waitFor(_ events: Int16, timeout: Double, phase: String) throws(NetworkFailure) {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if cancelled.isSet { throw .connectionFailed(detail: "cancelled") }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { throw .timedOut(phase: phase, seconds: timeout) }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let n = poll(&p, 1, Int32(min(left, 3600) * 1000) + 1)
            if n > 0 { return }
            if n < 0 && errno != EINTR { throw .connectionFailed(detail: errnoText()) }
        }
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { cancelled.isSet }

    /// Any thread. After ``close()`` it does nothing: the descriptor number may already belong
    /// to another connection.
    package func cancel() {
        cancelled.set()
        closingLock.withLock {
            if !closed.isSet { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    package func close() {
        closingLock.withLock {
            guard closed.setIfClear() else { return }
            Glibc.close(fd)
        }
    }
    /// Orders ``cancel()``'s shutdown against ``close()``.
    private let closingLock = NSLock()
}

/// A flag set once, read from any thread.
final class AtomicFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
    /// Sets the flag; true if it was clear.
    func setIfClear() -> Bool { lock.withLock { defer { value = true }; return !value } }
}

func errnoText() -> String { String(cString: strerror(errno)) }
