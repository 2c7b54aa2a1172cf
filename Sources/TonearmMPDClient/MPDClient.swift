// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
@_exported import TonearmMPDProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Where an MPD-protocol server listens: a Unix socket or a TCP host and port.
public enum MPDAddress: Sendable, Hashable, CustomStringConvertible {
    case unix(path: String)
    case tcp(host: String, port: Int)

    /// The daemon's own socket: `$XDG_RUNTIME_DIR/tonearm/mpd.sock` (`/tmp/tonearm-UID/mpd.sock`
    /// without `XDG_RUNTIME_DIR`), where `tonearm daemon` always listens.
    public static var daemonSocket: MPDAddress {
        let env = ProcessInfo.processInfo.environment
        if let d = env["XDG_RUNTIME_DIR"], !d.isEmpty { return .unix(path: d + "/tonearm/mpd.sock") }
        return .unix(path: "/tmp/tonearm-\(getuid())/mpd.sock")
    }

    /// Reads an address as mpc's `MPD_HOST` or `--host` takes it: a path (starting with `/`)
    /// is a Unix socket; `HOST:PORT` or `HOST` (port `defaultPort`) is TCP; `[v6]:PORT` too.
    /// Nil for an empty text or a port that is not 1–65535.
    public init?(_ text: String, defaultPort: Int = 6600) {
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("/") || text.hasPrefix("@") {
            self = .unix(path: text)
            return
        }
        var host = text
        var port = defaultPort
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let p = Int(rest.dropFirst()) else { return nil }
                port = p
            } else if !rest.isEmpty { return nil }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            guard let p = Int(text[text.index(after: colon)...]) else { return nil }
            port = p
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        self = .tcp(host: host, port: port)
    }

    /// `/run/user/1000/tonearm/mpd.sock`, `127.0.0.1:6600`.
    public var description: String {
        switch self {
        case .unix(let path): return path
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// Whether the server treats the client as local (a Unix socket: it may add files by their
    /// absolute paths).
    public var isLocal: Bool { if case .unix = self { return true } else { return false } }
}

/// What went wrong talking to an MPD-protocol server.
public enum MPDClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing answers at the address (no socket, connection refused, unreachable): `reason` is
    /// the system's word for it.
    case noServer(MPDAddress, reason: String)
    /// The server answered the request with an `ACK`.
    case server(MPDServerError)
    /// The server closed the connection (or it broke) before the answer ended.
    case connectionClosed(MPDAddress, reason: String)
    /// The server sent something that is not the MPD protocol.
    case protocolError(MPDAddress, String)
    /// No answer within the time allowed.
    case timedOut(MPDAddress, seconds: Double)
    /// The client was closed.
    case closed

    public var description: String {
        switch self {
        case .noServer(let a, let reason): return "no daemon at \(a) (\(reason))"
        case .server(let e): return e.message.isEmpty ? e.description : e.message
        case .connectionClosed(let a, let reason): return "the daemon at \(a) closed the connection (\(reason))"
        case .protocolError(let a, let what): return "\(a) does not speak the MPD protocol: \(what)"
        case .timedOut(let a, let s): return "the daemon at \(a) did not answer within \(s.formatted()) s"
        case .closed: return "the connection was closed"
        }
    }
}

/// A client connection to an MPD-protocol server (`tonearm daemon`, MPD): typed, async, one
/// request at a time in the order they are made.
///
/// Threading: every method may be called from any thread or task. The socket is read and
/// written on a serial dispatch queue of the connection's own (blocking calls there, never on
/// Swift's cooperative threads); each async method suspends until its answer is read. Requests
/// from several tasks are answered in the order they reached the queue. ``idle(_:)`` occupies
/// the connection until an event comes or the waiting task is cancelled (which sends `noidle`
/// from the cancelling thread; the socket's writes are atomic for such a line).
public final class MPDClient: Sendable {
    public let address: MPDAddress
    /// The protocol version the server announced (`0.23.5`).
    public let protocolVersion: String
    /// Seconds an ordinary answer may take (not `idle`).
    public let timeout: Double
    private let fd: Int32
    private let queue: DispatchQueue
    private let state: Mutex<State>

    private struct State: Sendable {
        var parser = MPDResponseParser()
        var closed = false
    }

    private init(address: MPDAddress, fd: Int32, parser: MPDResponseParser, version: String, timeout: Double) {
        self.address = address
        self.fd = fd
        self.protocolVersion = version
        self.timeout = timeout
        queue = DispatchQueue(label: "tonearm.mpd-client")
        state = Mutex(State(parser: parser))
    }

    deinit { Glibc.close(fd) }

    /// Connects, reads the greeting and, with a `password`, sends it.
    /// - Throws: ``MPDClientError/noServer(_:reason:)`` when nothing listens there,
    ///   ``MPDClientError/server(_:)`` for a wrong password.
    public static func connect(to address: MPDAddress, password: String? = nil, timeout: Double = 30) async throws(MPDClientError) -> MPDClient {
        let result: Result<MPDClient, MPDClientError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(MPDClientError) in try connectNow(to: address, timeout: timeout) })
            }
        }
        let client = try result.get()
        if let password { try await client.send("password", password) }
        return client
    }

    /// Blocking: the socket, the connection and the greeting.
    private static func connectNow(to address: MPDAddress, timeout: Double) throws(MPDClientError) -> MPDClient {
        let fd: Int32
        switch address {
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw .noServer(address, reason: String(cString: strerror(errno))) }
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            let fits = withUnsafeMutableBytes(of: &sa.sun_path) { raw -> Bool in
                guard bytes.count < raw.count else { return false }
                for (i, b) in bytes.enumerated() { raw[i] = b }
                // An abstract socket (`@name`): a NUL first.
                if bytes.first == UInt8(ascii: "@") { raw[0] = 0 }
                return true
            }
            guard fits else {
                Glibc.close(fd)
                throw .noServer(address, reason: "the path is too long for a socket")
            }
            let length = bytes.first == UInt8(ascii: "@") ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count) : socklen_t(MemoryLayout<sockaddr_un>.size)
            let rc = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) } }
            guard rc == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw .noServer(address, reason: reason)
            }
        case .tcp(let host, let port):
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            let gai = getaddrinfo(host, String(port), &hints, &list)
            guard gai == 0, let first = list else { throw .noServer(address, reason: String(cString: gai_strerror(gai))) }
            defer { freeaddrinfo(list) }
            var reason = "no address"
            var connected: Int32 = -1
            var ai: UnsafeMutablePointer<addrinfo>? = first
            while let a = ai {
                // Non-blocking, so that a host that drops the packets is given up after `timeout`
                // (not the kernel's two minutes).
                let s = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                               a.pointee.ai_protocol)
                if s >= 0 {
                    if let failure = connectWithin(s, a.pointee.ai_addr, a.pointee.ai_addrlen, timeout: timeout) {
                        reason = failure
                        Glibc.close(s)
                    } else {
                        _ = fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK)
                        connected = s
                        break
                    }
                }
                ai = a.pointee.ai_next
            }
            guard connected >= 0 else { throw .noServer(address, reason: reason) }
            fd = connected
        }
        var parser = MPDResponseParser()
        do {
            while true {
                if let version = try parser.readGreeting() {
                    return MPDClient(address: address, fd: fd, parser: parser, version: version, timeout: timeout)
                }
                try readMore(fd: fd, into: &parser, address: address, timeout: timeout)
            }
        } catch let e as MPDClientError {
            Glibc.close(fd)
            throw e
        } catch let e as MPDResponseError {
            Glibc.close(fd)
            throw .protocolError(address, e.message)
        } catch {
            Glibc.close(fd)
            throw .protocolError(address, "\(error)")
        }
    }

    /// Connects the non-blocking socket `s`, waiting at most `timeout` seconds: nil, or why not.
    private static func connectWithin(_ s: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, timeout: Double) -> String? {
        if Glibc.connect(s, address, length) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        var pfd = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
        var n: Int32
        repeat { n = poll(&pfd, 1, Int32(min(timeout * 1000, Double(Int32.max)))) } while n < 0 && errno == EINTR
        if n == 0 { return "no answer within \(timeout.formatted()) s" }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return String(cString: strerror(errno)) }
        return error == 0 ? nil : String(cString: strerror(error))
    }

    /// Waits (poll, at most `timeout` s; negative: no limit) and reads what came into `parser`.
    private static func readMore(fd: Int32, into parser: inout MPDResponseParser, address: MPDAddress, timeout: Double) throws(MPDClientError) {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&pfd, 1, timeout < 0 ? -1 : Int32(min(timeout * 1000, Double(Int32.max))))
            if n < 0 && errno == EINTR { continue }
            if n == 0 { throw .timedOut(address, seconds: timeout) }
            break
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if got < 0 { throw .connectionClosed(address, reason: String(cString: strerror(errno))) }
        if got == 0 { throw .connectionClosed(address, reason: "end of stream") }
        parser.feed(chunk[0..<got])
    }

    /// Sends one request and returns its answer.
    /// - Throws: ``MPDClientError/server(_:)`` with the server's ACK; the other cases when the
    ///   connection failed (it is unusable then).
    @discardableResult
    public func send(_ command: String, _ arguments: String...) async throws(MPDClientError) -> MPDReply {
        try await send(command, arguments: arguments)
    }

    /// ``send(_:_:)`` with the arguments as an array.
    @discardableResult
    public func send(_ command: String, arguments: [String]) async throws(MPDClientError) -> MPDReply {
        try await exchange(Self.line(command, arguments), timeout: timeout)
    }

    /// Sends `requests` as one command list (`command_list_ok_begin`): one reply per request;
    /// the first failing one ends the list with its error (``MPDServerError/listIndex`` says
    /// which).
    public func sendList(_ requests: [(command: String, arguments: [String])]) async throws(MPDClientError) -> [MPDReply] {
        var text = "command_list_ok_begin\n"
        for r in requests { text += Self.line(r.command, r.arguments) }
        text += "command_list_end\n"
        let reply = try await exchange(text, timeout: timeout)
        var replies = reply.listReplies
        while replies.count < requests.count { replies.append(MPDReply()) }
        return replies
    }

    /// Waits for the next change of the server's state (`idle`): the changed subsystems
    /// (`player`, `playlist`, `mixer`, `options`, `database`, …). With `subsystems`, only those
    /// wake it. Cancelling the waiting task sends `noidle` and returns what the server said then
    /// (often nothing).
    public func idle(_ subsystems: [String] = []) async throws(MPDClientError) -> [String] {
        let line = Self.line("idle", subsystems)
        // Whether `idle` was written, and whether the task was cancelled: a cancellation before
        // the line was sent sends nothing (a `noidle` then would be ignored, and the idle after
        // it would wait for ever).
        let flag = Mutex<(sent: Bool, cancelled: Bool)>((false, false))
        let result: Result<MPDReply, MPDClientError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                queue.async {
                    let go = flag.withLock { f -> Bool in
                        guard !f.cancelled, !self.state.withLock({ $0.closed }) else { return false }
                        self.write(line)
                        f.sent = true
                        return true
                    }
                    guard go else {
                        continuation.resume(returning: self.state.withLock({ $0.closed }) ? .failure(.closed) : .success(MPDReply()))
                        return
                    }
                    continuation.resume(returning: Result { () throws(MPDClientError) in try self.readAnswerNow(timeout: -1) })
                }
            }
        } onCancel: {
            // The server ends the idle with what it has (an OK); a `noidle` that comes after the
            // idle ended is ignored by MPD and by the daemon.
            flag.withLock { f in
                f.cancelled = true
                if f.sent { self.write("noidle\n") }
            }
        }
        return try result.get().values(of: "changed")
    }

    /// The changes of the server's state as they come, from `idle` in a loop on this
    /// connection (which is then busy: use a connection of its own for it). Ends when the
    /// connection fails (with the error) or when the consumer stops iterating.
    public func changes(_ subsystems: [String] = []) -> AsyncThrowingStream<[String], any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        let changed = try await self.idle(subsystems)
                        if !changed.isEmpty { continuation.yield(changed) }
                    } catch {
                        continuation.finish(throwing: error)
                        return
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Closes the connection (sends `close`); later requests fail with ``MPDClientError/closed``.
    public func close() {
        let first = state.withLock { s in
            defer { s.closed = true }
            return !s.closed
        }
        if first {
            write("close\n")
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// A request line: the command and its quoted arguments.
    static func line(_ command: String, _ arguments: [String]) -> String {
        ([command] + arguments.map(MPDRequest.quoted)).joined(separator: " ") + "\n"
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            off += n
        }
    }

    private func exchange(_ text: String, timeout: Double) async throws(MPDClientError) -> MPDReply {
        let result: Result<MPDReply, MPDClientError> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(MPDClientError) in try self.exchangeNow(text, timeout: timeout) })
            }
        }
        return try result.get()
    }

    /// On the queue: writes the request and reads its answer.
    private func exchangeNow(_ text: String, timeout: Double) throws(MPDClientError) -> MPDReply {
        guard !state.withLock({ $0.closed }) else { throw .closed }
        write(text)
        return try readAnswerNow(timeout: timeout)
    }

    /// On the queue: reads the next answer.
    private func readAnswerNow(timeout: Double) throws(MPDClientError) -> MPDReply {
        var parser = state.withLock { $0.parser }
        defer { state.withLock { $0.parser = parser } }
        while true {
            let answer: MPDResponseParser.Answer?
            do { answer = try parser.nextAnswer() } catch { throw .protocolError(address, error.message) }
            switch answer {
            case .ok(let reply): return reply
            case .failure(let error, _): throw .server(error)
            case nil: try Self.readMore(fd: fd, into: &parser, address: address, timeout: timeout)
            }
        }
    }
}
