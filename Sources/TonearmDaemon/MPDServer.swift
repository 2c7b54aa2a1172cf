// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TonearmMPDProtocol

/// The server's limits (MPD's defaults where it has one).
public struct MPDServerLimits: Sendable, Hashable {
    /// The longest request line (bytes); a longer one closes the connection.
    public var maxLineLength = 64 * 1024
    /// A command list's lines may add up to this (MPD: 2 MiB).
    public var maxCommandListBytes = 2 << 20
    /// Answers not yet taken by the client beyond this close its connection (MPD: 8 MiB).
    public var maxOutputBuffer = 8 << 20
    /// Connections at once (MPD: 100); one more is closed at once.
    public var maxConnections = 100

    public init() {}
}

/// Where the server listens.
public enum MPDListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// A Unix socket: its clients may add local files.
    case unix(path: String)
    case tcp(host: String, port: Int)

    /// `HOST:PORT`, `[V6]:PORT`, or a path (starting with `/`).
    public init(parsing text: String) throws {
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw MPDServerError("listen address '\(text)': expected ADDR:PORT (127.0.0.1:6600) or a socket path")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self = .tcp(host: host.isEmpty ? "127.0.0.1" : host, port: port)
    }

    public var description: String {
        switch self {
        case .unix(let p): p
        case .tcp(let h, let p): h.contains(":") ? "[\(h)]:\(p)" : "\(h):\(p)"
        }
    }
}

public struct MPDServerError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Splits the byte stream into lines (without `\n`); a line longer than the limit is an error
/// (the connection closes).
struct MPDLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = [UInt8]
    let maxLineLength: Int

    struct LineTooLong: Error {}

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let nl = view.firstIndex(of: 10) else {
            if buffer.readableBytes > maxLineLength { throw LineTooLong() }
            return .needMoreData
        }
        let length = nl - view.startIndex
        guard length <= maxLineLength else { throw LineTooLong() }
        let line = buffer.readBytes(length: length) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }
}

/// One client connection: greeting, lines through an ``MPDRequestFramer``, commands handed to
/// the ``MPDDaemon`` one batch at a time (lines that come meanwhile wait, in order), `idle`
/// answered from the subsystems changed since the client last heard of them. Lives on its
/// channel's event loop; the daemon's answers and the hub's events hop there.
final class MPDConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    static let greeting = "OK MPD 0.23.5\n"

    private let daemon: MPDDaemon
    private let limits: MPDServerLimits
    private let logger: Logger
    private var framer: MPDRequestFramer
    private var client: MPDClientContext
    private var context: ChannelHandlerContext?
    private var inbox: [[UInt8]] = []
    private var inboxHead = 0
    private var busy = false
    private var closing = false
    /// Subsystems changed since the client last heard (MPD's idle flags).
    private var pending = Set<MPDSubsystem>()
    /// What the pending `idle` waits for (nil: not idling).
    private var idleMask: Set<MPDSubsystem>? {
        didSet {
            if (oldValue == nil) != (idleMask == nil) { daemon.hub.idleChanged(by: idleMask == nil ? -1 : 1) }
        }
    }
    private var subscription: UInt64?

    init(daemon: MPDDaemon, isLocal: Bool, limits: MPDServerLimits, logger: Logger) {
        self.daemon = daemon
        self.limits = limits
        self.logger = logger
        framer = MPDRequestFramer(maxCommandListBytes: limits.maxCommandListBytes)
        client = MPDClientContext(isLocal: isLocal, permissions: daemon.access.initialPermissions(isLocal: isLocal))
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func channelActive(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        subscription = daemon.hub.subscribe { changed in
            loop.execute { bound.value.subsystemsChanged(changed) }
        }
        client.connection = subscription ?? 0
        send(Self.greeting)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let subscription {
            daemon.hub.unsubscribe(subscription)
            daemon.connectionClosed(subscription)
        }
        subscription = nil
        closing = true
        idleMask = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        if let subscription {
            daemon.hub.unsubscribe(subscription)
            daemon.connectionClosed(subscription)
        }
        subscription = nil
        self.context = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("connection closed: \(error)")
        close()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        inbox.append(unwrapInboundIn(data))
        process()
    }

    /// Works through the lines received, one batch at a time.
    private func process() {
        while !busy, !closing, inboxHead < inbox.count {
            let line = inbox[inboxHead]
            inboxHead += 1
            if inboxHead > 64, inboxHead * 2 > inbox.count {
                inbox.removeFirst(inboxHead)
                inboxHead = 0
            }
            switch framer.receive(line: line) {
            case .none:
                continue
            case .close(let reason):
                logger.debug("closing a connection: \(reason)")
                close()
            case .endIdle:
                answerIdle(with: pending.intersection(idleMask ?? []))
            case .execute(let batch):
                if batch.mode == .single, startIdle(batch.lines[0]) { continue }
                // A read-only command is answered here and now (no task queued on the loop).
                if let result = daemon.executeInline(batch, client: client) {
                    guard deliver(result) else { return }
                    continue
                }
                busy = true
                let bound = NIOLoopBound(self, eventLoop: context!.eventLoop)
                let loop = context!.eventLoop
                daemon.execute(batch, client: client) { result in
                    loop.execute { bound.value.finished(result) }
                }
            }
        }
    }

    /// `idle [SUBSYSTEM…]`: answered at once when something it waits for changed already,
    /// otherwise when it does (or at `noidle`). False when the line is not `idle`.
    private func startIdle(_ line: [UInt8]) -> Bool {
        guard line.starts(with: "idle".utf8), line.count == 4 || line[4] == 0x20 || line[4] == 0x09,
              let request = try? MPDRequest(line: line), request.command == "idle",
              // Without `read`, the daemon answers it with MPD's permission error.
              MPDCommands.allows("idle", client.permissions) else { return false }
        var mask = Set<MPDSubsystem>()
        for a in request.arguments {
            guard let s = MPDSubsystem(rawValue: a) else {
                send(MPDAck(.argument, "Unrecognized idle event: \(a)", command: "idle").line + "\n")
                return true
            }
            mask.insert(s)
        }
        if mask.isEmpty { mask = Set(MPDSubsystem.allCases) }
        let ready = pending.intersection(mask)
        if !ready.isEmpty {
            answerIdle(with: ready)
            return true
        }
        idleMask = mask
        framer.enterIdle()
        return true
    }

    private func answerIdle(with changed: Set<MPDSubsystem>) {
        var text = ""
        for s in MPDSubsystem.allCases where changed.contains(s) { text += MPDResponse.pair("changed", s.rawValue) }
        pending.subtract(changed)
        idleMask = nil
        send(text + MPDResponse.ok)
    }

    private func subsystemsChanged(_ changed: Set<MPDSubsystem>) {
        guard !closing else { return }
        pending.formUnion(changed)
        if let mask = idleMask, framer.isIdle {
            let ready = pending.intersection(mask)
            guard !ready.isEmpty else { return }
            framer.leaveIdle()
            answerIdle(with: ready)
            process()
        }
    }

    private func finished(_ result: MPDBatchResult) {
        busy = false
        guard deliver(result) else { return }
        process()
    }

    /// Sends `result`; false when the connection is closing or closes now.
    private func deliver(_ result: MPDBatchResult) -> Bool {
        guard !closing else { return false }
        client = result.client
        if let bytes = result.bytes {
            send(bytes: bytes, then: result.text)
        } else if !result.text.isEmpty {
            send(result.text)
        }
        if result.close {
            close()
            return false
        }
        return true
    }

    /// Writes `text`; closes a client that has left more than the limit unread.
    private func send(_ text: String) {
        guard let context, !closing else { return }
        write(context.channel.allocator.buffer(string: text))
    }

    /// Writes raw bytes (an answer with a binary part, a long song listing), then `text`, in
    /// one buffer.
    private func send(bytes: [UInt8], then text: String) {
        guard let context, !closing else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count + text.utf8.count)
        buffer.writeBytes(bytes)
        buffer.writeString(text)
        write(buffer)
    }

    private func write(_ buffer: ByteBuffer) {
        guard let context, !closing else { return }
        // What the socket has not taken yet (NIO's pending writes), read on the loop: no promise
        // and callback per answer to count it.
        let unflushed = (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        if unflushed + buffer.readableBytes > limits.maxOutputBuffer {
            logger.info("closing a client that does not read its answers (\(unflushed) bytes unread)")
            close()
            return
        }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    private func close() {
        guard !closing, let context else { return }
        closing = true
        context.close(promise: nil)
    }
}

/// Counts connections across the server's channels.
final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)
    func enter(limit: Int) -> Bool {
        let n = count.wrappingAdd(1, ordering: .relaxed).newValue
        if n > limit {
            count.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }
    func leave() { count.wrappingSubtract(1, ordering: .relaxed) }
}

/// The MPD server: one event loop group, one listening channel per address.
public final class MPDServer: Sendable {
    public let daemon: MPDDaemon
    public let limits: MPDServerLimits
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let counter = ConnectionCounter()
    private let channels = Mutex<[any Channel]>([])

    public init(daemon: MPDDaemon, limits: MPDServerLimits = MPDServerLimits(),
                logger: Logger = Logger(label: "tonearm.daemon", factory: { _ in SwiftLogNoOpLogHandler() }), threads: Int = 1) {
        self.daemon = daemon
        self.limits = limits
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    }

    /// Starts listening on `address`; returns the address bound (a TCP port 0 gets its number).
    @discardableResult
    public func listen(_ address: MPDListenAddress) async throws -> MPDListenAddress {
        let isLocal: Bool
        if case .unix = address { isLocal = true } else { isLocal = false }
        let daemon = daemon, limits = limits, logger = logger, counter = counter
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard counter.enter(limit: limits.maxConnections) else {
                    logger.info("too many connections (\(limits.maxConnections)): one refused")
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in counter.leave() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(MPDLineDecoder(maxLineLength: limits.maxLineLength)))
                    try channel.pipeline.syncOperations.addHandler(MPDConnectionHandler(daemon: daemon, isLocal: isLocal, limits: limits, logger: logger))
                }
            }
        let channel: any Channel
        switch address {
        case .unix(let path):
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
        case .tcp(let host, let port):
            channel = try await bootstrap.bind(host: host, port: port).get()
        }
        channels.withLock { $0.append(channel) }
        if case .tcp(let host, _) = address, let port = channel.localAddress?.port {
            logger.info("listening on \(MPDListenAddress.tcp(host: host, port: port))")
            return .tcp(host: host, port: port)
        }
        logger.info("listening on \(address)")
        return address
    }

    /// Closes the listening sockets and the event loops (connections end with them).
    public func shutdown() async {
        let all = channels.withLock { c in
            defer { c = [] }
            return c
        }
        for c in all { try? await c.close() }
        try? await group.shutdownGracefully()
    }
}
