// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmMPDProtocol
import TonearmExport
import TonearmRender

/// The HTTP stream output (`http:ADDR:PORT[:FORMAT]`, as MPD's `httpd`): what plays, encoded as
/// FLAC, MP3 or Ogg Opus and sent to any number of listeners. Titles: for FLAC and MP3 as ICY
/// metadata (`StreamTitle`) every 8 KiB for a listener that sends `Icy-MetaData: 1`; for Ogg
/// Opus in the stream, as MPD does for Ogg: each new title ends the Ogg stream and chains a new
/// one whose OpusTags hold `TITLE` and `ARTIST`. Everything runs on the output's own thread with
/// non-blocking sockets: a listener that does not keep up (more than 1 MiB unsent) is dropped and
/// never holds the others back. Disabled (`disableoutput`), it closes its listeners and its port,
/// as MPD's httpd does; enabled again, it listens again.
public final class HTTPStreamOutput: @unchecked Sendable {
    // @unchecked: `listener`, `clients`, `encoder` and `streamTitle` belong to the writer's
    // thread (after `start`); the title is behind its mutex, the enabled state atomic.
    public static let metaInterval = 8192
    static let maxPending = 1 << 20
    /// The kernel's send buffer of a listener's socket: bounded, so that what a listener is
    /// behind is mostly ours to count.
    static let socketBuffer: Int32 = 256 * 1024
    public let host: String
    public let port: Int
    public let format: LiveStreamFormat
    public let writer: TapWriter
    private let log: @Sendable (String) -> Void
    private let title = Mutex<StreamTitle>(StreamTitle())
    private let enabled = Atomic<Bool>(true)
    private var listener: Int32 = -1
    private var bindFailed = false
    private var encoder: LiveEncoder?
    private var streamTitle = StreamTitle()
    private var clients: [Client] = []
    private let clientCount = Atomic<Int>(0)
    private let encodedBytes = Atomic<Int>(0)

    /// What plays, for the titles: `text` for ICY (`Artist - Title`), the tags for OpusTags.
    public struct StreamTitle: Sendable, Equatable {
        public var text = ""
        public var artist: String?
        public var title: String?
        public init(text: String = "", artist: String? = nil, title: String? = nil) {
            self.text = text
            self.artist = artist
            self.title = title
        }
        /// Vorbis comments for an Ogg stream.
        var comments: [String] {
            guard !text.isEmpty || title != nil else { return [] }
            return ["TITLE=\(title ?? text)"] + (artist.map { ["ARTIST=\($0)"] } ?? [])
        }
    }

    private final class Client {
        var fd: Int32
        var head: [UInt8] = []
        var started = false
        var wantsMetadata = false
        var pending: [UInt8] = []
        var untilMeta = HTTPStreamOutput.metaInterval
        var sentTitle = ""
        init(fd: Int32) { self.fd = fd }
    }

    public init(host: String, port: Int, format: LiveStreamFormat = .flac, tap: OutputTap, log: @escaping @Sendable (String) -> Void) {
        self.host = host
        self.port = port
        self.format = format
        self.log = log
        writer = TapWriter(tap: tap, outputRate: 48_000, name: "tonearm-httpd")
    }

    /// Listeners connected now.
    public var listeners: Int { clientCount.load(ordering: .relaxed) }
    /// Stream bytes encoded for the listeners so far (headers and ICY blocks not counted).
    public var bytesEncoded: Int { encodedBytes.load(ordering: .acquiring) }

    /// The title (`Artist - Title`, and the tags apart) sent to listeners from now on.
    public func setTitle(_ t: StreamTitle) { title.withLock { $0 = t } }
    public func setTitle(_ t: String) { setTitle(StreamTitle(text: t)) }

    /// `enableoutput`/`disableoutput`: disabled, the listeners are closed and the port too (new
    /// connections are refused); enabled, the port is listened on again. Done on the output's thread.
    public func setEnabled(_ on: Bool) { enabled.store(on, ordering: .releasing) }

    /// Binds the port and starts the thread. Throws when the address cannot be listened on.
    public func start() throws {
        signal(SIGPIPE, SIG_IGN)
        listener = try bindListener()
        streamTitle = title.withLock { $0 }
        encoder = try LiveEncoder(format: format, sampleRate: 48_000, comments: streamTitle.comments)
        try writer.start(deliver: { [self] in send($0, frames: $1) }, idle: { [self] in service() })
    }

    private func bindListener() throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var info: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &info) == 0, let ai = info else {
            throw TonearmError.outputUnavailable(driver: "http:\(host):\(port)", reason: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(info) }
        let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard fd >= 0, bind(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw TonearmError.outputUnavailable(driver: "http:\(host):\(port)", reason: "cannot listen on \(host):\(port): \(reason)")
        }
        return fd
    }

    public func stop() {
        writer.stop()
        for c in clients where c.fd >= 0 { close(c.fd) }
        clients = []
        clientCount.store(0, ordering: .relaxed)
        if listener >= 0 { close(listener); listener = -1 }
    }

    /// Follows ``setEnabled(_:)``: closes the port and every listener, or listens again.
    private func followEnabled() -> Bool {
        let on = enabled.load(ordering: .acquiring)
        if !on, listener >= 0 {
            close(listener)
            listener = -1
            for c in clients { drop(c, why: nil) }
            clients = []
            clientCount.store(0, ordering: .relaxed)
            log("http: disabled: port \(port) closed, its listeners too")
        } else if on, listener < 0 {
            do {
                listener = try bindListener()
                bindFailed = false
                log("http: listening on \(host):\(port) again")
            } catch {
                if !bindFailed { log("http: \(error); trying again") }
                bindFailed = true
            }
        }
        return on && listener >= 0
    }

    /// Accepts listeners, reads their requests, answers them, flushes what is pending.
    private func service() {
        guard followEnabled() else { return }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { break }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var size = Self.socketBuffer
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            clients.append(Client(fd: fd))
        }
        var buffer = [UInt8](repeating: 0, count: 2048)
        for c in clients where !c.started {
            let n = read(c.fd, &buffer, buffer.count)
            if n == 0 || (n < 0 && errno != EAGAIN) { drop(c, why: nil); continue }
            if n > 0 { c.head += buffer[0..<n] }
            if c.head.count > 8192 { drop(c, why: "request too long"); continue }
            guard let end = c.head.firstRange(of: [13, 10, 13, 10]) ?? c.head.firstRange(of: [10, 10]) else { continue }
            guard let request = HTTPStreamRequest.parse(Array(c.head[..<end.upperBound])), request.method == "GET" || request.method == "HEAD" else {
                _ = "HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n".withCString { write(c.fd, $0, strlen($0)) }
                drop(c, why: "a bad request")
                continue
            }
            c.started = true
            c.wantsMetadata = request.wantsMetadata && !format.titlesInStream
            var head = "HTTP/1.0 200 OK\r\nContent-Type: \(format.contentType)\r\nicy-name: Tonearm\r\nCache-Control: no-cache\r\n"
            if c.wantsMetadata { head += "icy-metaint: \(Self.metaInterval)\r\n" }
            head += "\r\n"
            c.pending = Array(head.utf8)
            if request.method == "GET" { queue(encoder?.streamHeader ?? [], to: c) } else { c.started = false; flush(c); drop(c, why: nil); continue }
        }
        for c in clients where c.started { flush(c) }
        clients.removeAll { $0.fd < 0 }
        clientCount.store(clients.count, ordering: .relaxed)
    }

    private func send(_ samples: UnsafePointer<Float>, frames: Int) {
        let live = clients.filter(\.started)
        guard let encoder else { return }
        do {
            if format.titlesInStream {
                let now = title.withLock { $0 }
                if now != streamTitle {
                    streamTitle = now
                    try encoder.startStream(comments: now.comments) { bytes in
                        for c in live { queue(Array(bytes), to: c) }
                    }
                }
            }
            guard !live.isEmpty else { return }
            try encoder.encode(samples, frames: frames) { bytes in
                for c in live { queue(Array(bytes), to: c) }
                encodedBytes.wrappingAdd(bytes.count, ordering: .releasing)
            }
        } catch {
            log("http: \(error)")
        }
        for c in live { flush(c) }
        clients.removeAll { $0.fd < 0 }
        clientCount.store(clients.count, ordering: .relaxed)
    }

    /// Queues stream bytes for `c`, with an ICY block every ``metaInterval`` bytes when it asked.
    private func queue(_ bytes: [UInt8], to c: Client) {
        guard c.fd >= 0 else { return }
        defer { if c.pending.count > Self.maxPending { drop(c, why: "too slow (more than 1 MiB unsent)") } }
        guard c.wantsMetadata else { c.pending += bytes; return }
        var rest = bytes[...]
        while !rest.isEmpty {
            let n = min(rest.count, c.untilMeta)
            c.pending += rest.prefix(n)
            rest = rest.dropFirst(n)
            c.untilMeta -= n
            if c.untilMeta == 0 {
                c.untilMeta = Self.metaInterval
                let t = title.withLock { $0.text }
                if t == c.sentTitle {
                    c.pending.append(0)
                } else {
                    c.sentTitle = t
                    var text = Array("StreamTitle='\(t.replacingOccurrences(of: "'", with: "’"))';".utf8)
                    if text.count > 255 * 16 { text = Array(text.prefix(255 * 16)) }
                    let blocks = (text.count + 15) / 16
                    c.pending.append(UInt8(blocks))
                    c.pending += text + [UInt8](repeating: 0, count: blocks * 16 - text.count)
                }
            }
        }
    }

    private func flush(_ c: Client) {
        guard c.fd >= 0, !c.pending.isEmpty else { return }
        let n = c.pending.withUnsafeBytes { Glibc.send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n > 0 {
            c.pending.removeFirst(n)
        } else if n < 0, errno != EAGAIN, errno != EINTR {
            drop(c, why: nil)
        }
    }

    private func drop(_ c: Client, why: String?) {
        guard c.fd >= 0 else { return }
        if let why { log("http: a listener was dropped: \(why)") }
        close(c.fd)
        c.fd = -1  // removed from `clients` at the end of the pass
        c.pending = []
        c.started = false
    }
}
