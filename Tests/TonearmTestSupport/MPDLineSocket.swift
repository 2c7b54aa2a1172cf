// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A client connection to an MPD-protocol server — the daemon or a real MPD — on a Unix socket or
/// TCP on 127.0.0.1, for protocol tests: reads the greeting, sends bytes, and reads lines (or raw
/// bytes, for `binary:` chunks) with a deadline (poll, never a sleep). One per connection, used
/// by one test thread at a time.
public final class MPDLineSocket: @unchecked Sendable {
    public let fd: Int32
    /// What was read and not yet taken (a line's rest, a binary chunk).
    public var pending: [UInt8] = []
    /// The first line the server sent (`OK MPD 0.23.5`; `<closed>` when it closed at once).
    public private(set) var greeting = ""

    /// Connects to the Unix socket at `unixPath` and reads the greeting.
    public init(unixPath: String, timeout: Double = 10) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in unixPath.utf8.enumerated() where i < raw.count - 1 { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw TestSupportError("connect \(unixPath): \(reason)")
        }
        greeting = try readLine(timeout: timeout) ?? "<closed>"
    }

    /// Connects to 127.0.0.1:`port` and reads the greeting.
    public init(tcpPort port: Int, timeout: Double = 10) throws {
        fd = try connectLoopbackTCP(port: port)
        greeting = try readLine(timeout: timeout) ?? "<closed>"
    }

    deinit { close(fd) }

    /// Makes the close at deinit abortive (SO_LINGER 0): on TCP the server gets a reset, as from
    /// a client that vanished, instead of an orderly end.
    public func closeAbortively() {
        var l = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
    }

    /// Sends `bytes` as they are (no signal if the server has gone).
    public func send(_ bytes: [UInt8]) {
        var b = bytes
        _ = Glibc.send(fd, &b, b.count, Int32(MSG_NOSIGNAL))
    }

    /// Sends each of `lines` with its newline.
    public func send(lines: [String]) { send(Array(lines.map { $0 + "\n" }.joined().utf8)) }

    /// Reads what the server has sent into ``pending``, waiting at most `timeout` seconds for
    /// something; false when the server closed the connection. Throws when nothing came.
    @discardableResult
    public func fill(timeout: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw TestSupportError("no answer within \(timeout) s (have: \(String(decoding: pending, as: UTF8.self)))")
            }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, Int32(left * 1000) + 1)
            if n <= 0 { continue }  // EINTR, or the wait ended: the deadline decides
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let got = read(fd, &buffer, buffer.count)
            if got <= 0 { return false }
            pending += buffer[0..<got]
            return true
        }
    }

    /// The next line (nil: the connection closed), waiting at most `timeout` seconds in all.
    public func readLine(timeout: Double) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let nl = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            guard try fill(timeout: max(0.001, deadline.timeIntervalSinceNow)) else { return nil }
        }
    }

    /// Every line up to and including `OK` or `ACK …`, or ending with `<closed>`.
    public func readAnswer(timeout: Double = 10) throws -> [String] {
        var out: [String] = []
        while true {
            guard let l = try readLine(timeout: timeout) else {
                out.append("<closed>")
                return out
            }
            out.append(l)
            if l == "OK" || l.hasPrefix("ACK ") { return out }
        }
    }
}

/// A blocking TCP connection to 127.0.0.1:`port` (close-on-exec): its descriptor, which the
/// caller closes. Throws `TestSupportError` naming the port when the connection is refused.
public func connectLoopbackTCP(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard rc == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw TestSupportError("connect 127.0.0.1:\(port): \(reason)")
    }
    return fd
}
