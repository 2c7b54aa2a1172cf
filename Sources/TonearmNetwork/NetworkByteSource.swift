// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// One entry of a source's access log (the counterpart of `AVPlayerItemAccessLogEvent`): one
/// request and what it brought.
public struct NetworkAccessLogEntry: Sendable, Hashable {
    /// The address asked for, and the one that answered (after redirects).
    public var url: String
    public var finalURL: String
    /// The status of the response (200, 206).
    public var status: Int
    /// Where the request started (`Range: bytes=N-`), nil for the whole resource.
    public var rangeStart: Int64?
    /// Body bytes received on this request so far.
    public var bytesTransferred: Int64
    /// Seconds spent receiving them.
    public var transferDuration: Double
    /// Whether this request resumed after a dropped connection.
    public var isReconnect: Bool
    /// What was asked for: ``NetworkRequestKind/media`` for a plain source; an HLS source also
    /// asks for playlists and keys.
    public var kind: NetworkRequestKind = .media
    /// HLS: the media sequence number of the segment asked for (nil for playlists and keys).
    public var mediaSequence: Int? = nil
    /// HLS: the `BANDWIDTH` of the variant the request belongs to (bits/s), when the stream came
    /// from a master playlist (the counterpart of `indicatedBitrate`).
    public var indicatedBitrate: Double? = nil
}

/// What a request of a network source was for.
public enum NetworkRequestKind: Sendable, Hashable {
    /// Media bytes: the resource of a plain source, or one HLS segment.
    case media
    /// An HLS playlist (master or media; a first load, a reload, or a variant's after a switch).
    case playlist
    /// An HLS decryption key.
    case key
}

/// One entry of a source's error log (the counterpart of `AVPlayerItemErrorLogEvent`).
public struct NetworkErrorLogEntry: Sendable, Hashable {
    public var url: String
    public var failure: NetworkFailure
    /// What was done about it: "retrying in 0.5 s", "gave up".
    public var action: String
}

/// What a ``NetworkByteSource`` reports while it works, on its fetch thread.
public enum NetworkSourceEvent: Sendable, Hashable {
    /// The first response came: its content type, length (nil when unknown or endless) and
    /// whether the source can seek (ranges accepted).
    case opened(contentType: String?, length: Int64?, seekable: Bool)
    /// Metadata from an ICY stream: its fields (`StreamTitle`, `StreamUrl`).
    case metadata([String: String])
    /// More bytes arrived (the loaded ranges changed).
    case loaded
    /// The connection dropped or failed; retrying after `delay` seconds (attempt n).
    case retrying(attempt: Int, delay: Double, failure: NetworkFailure)
    /// A new request is made at `offset` (a resumption or a seek outside what is loaded).
    case requested(offset: Int64, reconnect: Bool)
    /// Everything there is has arrived.
    case finished
    /// The source failed for good.
    case failed(TonearmError)
}

/// How a ``NetworkByteSource`` fetches: limits, retries, how far ahead it reads.
public struct NetworkSourceOptions: Sendable {
    public var limits = NetworkLimits()
    /// Retries in a row after a drop before giving up.
    public var reconnectAttempts = 6
    /// The longest wait between retries, in seconds (before jitter: each wait is drawn from
    /// half to all of 0.25 s doubling per attempt, up to this).
    public var maximumBackoff = 4.0
    /// A resource whose server cannot seek (no `Accept-Ranges: bytes`, or a whole body for a
    /// ranged request) is read once from the start and kept whole in memory, every seek served
    /// from it: at most this many bytes (512 MB). A longer one fails at once with
    /// ``NetworkFailure/seekingUnsupported(length:limit:)``.
    public var maximumUnseekableBytes: Int64 = 512 << 20
    /// At most this many requests to the server in any ``requestWindow`` seconds, whatever
    /// the reader does (seeks, resumptions): a request beyond waits.
    public var requestBurst = 4
    public var requestWindow = 2.0
    /// Ask ICY servers for metadata.
    public var icyMetadata = true
    /// Bytes read ahead of the reader at most (the rest is fetched as it is read).
    public var maximumAhead: Int64 = 64 << 20
    /// For an endless stream: bytes kept behind the reader.
    public var keptBehind: Int64 = 1 << 20
    /// A seek at most this far ahead of what is arriving waits for it instead of a new request.
    public var seekAheadWindow: Int64 = 256 << 10
    public init() {}
}

/// The bytes of a network resource (`http`, `https`), fetched ahead of the reader on a thread of
/// their own and kept in memory, for a demuxer to read and seek in as in a file.
///
/// - A dropped connection is resumed where it stopped with a Range request (after 0.25 s, then
///   doubling up to ``Options/maximumBackoff``, each wait with jitter, at most
///   ``Options/reconnectAttempts`` times in a row); a server that ignores ranges is read again
///   from the start. An endless stream (radio) is joined again.
/// - A seek outside what has arrived (and beyond ``Options/seekAheadWindow`` of it) starts a
///   new Range request there; what was loaded stays (``loadedRanges``).
/// - A server that cannot seek (no `Accept-Ranges: bytes`, or a `200` with the whole body for a
///   ranged request — `python3 -m http.server`) is read once from the start and kept whole in
///   memory, up to ``Options/maximumUnseekableBytes`` (512 MB); a seek ahead waits for the bytes
///   to arrive, a seek back is served from memory. A longer resource fails at once with
///   ``NetworkFailure/seekingUnsupported(length:limit:)``.
/// - No more than ``Options/requestBurst`` requests go to the server in any
///   ``Options/requestWindow`` seconds.
/// - ICY streams (`icy-metaint`) are asked for metadata; it is taken out of the audio and
///   reported (``NetworkSourceEvent/metadata(_:)``).
/// - Failures are typed (``TonearmError/network(url:failure:)``): the first request's failure
///   ends the source at once; later ones after the retries.
///
/// - One download, several readers: ``makeReader()`` gives another source over the same bytes
///   with a read position of its own (a video's demuxer beside the sound's): nothing is fetched
///   twice. The fetcher keeps at most ``Options/maximumAhead`` ahead of the reader furthest on;
///   a reader behind reads what is kept.
///
/// Threading: ``read(into:)`` and ``seek(to:)`` are for one reader thread (a demuxer's), which
/// they block until bytes arrive, the end, a failure or ``cancel()`` — never longer than the
/// network limits and retries allow. Everything else may be called from any thread. Events are
/// delivered on the fetch thread (`tonearm-net`); keep the handler short.
public final class NetworkByteSource: ByteSource, Sendable {
    public typealias Options = NetworkSourceOptions
    private let fetcher: NetworkFetcher
    /// This source's reader of the fetcher.
    private let reader: Int

    /// A source for `url`; nothing is fetched until ``start()``. `onEvent` is called on the fetch
    /// thread.
    public init(url: URL, options: Options = Options(), onEvent: @escaping @Sendable (NetworkSourceEvent) -> Void = { _ in }) {
        fetcher = NetworkFetcher(url: url, options: options, onEvent: onEvent)
        reader = fetcher.addReader()
    }

    private init(sharing fetcher: NetworkFetcher) {
        self.fetcher = fetcher
        reader = fetcher.addReader()
    }

    /// Another reader of this download: a source with a read position of its own (at 0) over
    /// the same bytes, fetched once. Each reader is for its own thread. The download stops
    /// when every reader has been cancelled or released; ``cancel()`` on one wakes and ends that
    /// reader only (the others read on). Its events go to this source's handler.
    public func makeReader() -> NetworkByteSource { NetworkByteSource(sharing: fetcher) }

    /// Releasing the source ends its reader; the last reader's release stops the fetching.
    deinit { fetcher.removeReader(reader) }

    /// The address asked for.
    public var url: URL { fetcher.url }
    public var options: Options { fetcher.options }
    /// Starts fetching. Idempotent.
    public func start() { fetcher.start() }
    /// Stops fetching and wakes the reader (which then throws). With other readers
    /// (``makeReader()``): ends this reader only; the fetching stops with the last one. Any
    /// thread; idempotent.
    public func cancel() { fetcher.cancel(reader: reader) }
    /// Waits until the first response has come (true) or the source failed or was cancelled
    /// (false; see ``failure``), at most `timeout` seconds.
    public func waitUntilOpen(timeout: Double) -> Bool { fetcher.waitUntilOpen(timeout: timeout) }
    /// The resource's length in bytes, when the server said (nil for endless streams).
    public var length: Int64? { fetcher.length }
    /// Whether the server accepts ranges (a seek far ahead does not need the bytes before it).
    public var isSeekable: Bool { fetcher.isSeekable }
    /// The content type the server gave.
    public var contentType: String? { fetcher.contentType }
    /// The failure that ended the source, if it failed.
    public var failure: TonearmError? { fetcher.failure }
    /// Whether everything there is has arrived.
    public var isFinished: Bool { fetcher.isFinished }
    /// The byte ranges in memory, in order.
    public var loadedRanges: [Range<Int64>] { fetcher.loadedRanges }
    /// The requests made so far.
    public var accessLog: [NetworkAccessLogEntry] { fetcher.accessLog }
    /// The failures met so far (also those a retry overcame).
    public var errorLog: [NetworkErrorLogEntry] { fetcher.errorLog }
    /// The latest ICY metadata fields.
    public var icyMetadata: [String: String] { fetcher.icyMetadata }
    /// Bytes available at the read position without waiting.
    public var bytesAhead: Int64 { fetcher.bytesAhead(reader: reader) }
    /// Reads up to `buffer.count` bytes at the read position, waiting for them when they have
    /// not arrived. Returns 0 at the end. Throws the source's failure, or
    /// ``TonearmError/invalidState(_:)`` after ``cancel()``.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(TonearmError) -> Int { try fetcher.read(into: buffer, reader: reader) }
    /// Moves the read position (the bytes are fetched when read). Returns false for a position
    /// before 0 or past the end.
    @discardableResult
    public func seek(to offset: Int64) -> Bool { fetcher.seek(to: offset, reader: reader) }
    /// The read position.
    public var position: Int64 { fetcher.position(reader: reader) }
    /// The last `count` bytes, on a ranged request of their own (the reading and fetching go on
    /// undisturbed); nil before the first response, for an endless stream or a server without
    /// ranges, or when the request fails (once, no retry). Logged in ``accessLog``.
    public func readTail(_ count: Int) -> [UInt8]? { fetcher.readTail(count) }
}

/// The fetching behind a ``NetworkByteSource``: its state, its thread (which holds it), and the
/// reader's side. Ends when the source that owns it goes away (``cancel()``).
final class NetworkFetcher: @unchecked Sendable {
    typealias Options = NetworkSourceOptions

    /// The address asked for.
    public let url: URL
    public let options: Options

    private struct State {
        var chunks = ChunkStore<Void>()
        /// The read positions of the readers not cancelled, by id.
        var readers: [Int: Int64] = [:]
        var nextReader = 0
        var length: Int64?
        var contentType: String?
        var seekable = false
        var opened = false
        var finished = false
        var failure: TonearmError?
        var cancelled = false
        /// Where the fetcher should go next (a seek outside what is coming).
        var restartAt: Int64?
        /// Where the fetcher is writing now, when it is.
        var fetchPosition: Int64?
        var channel: ByteChannel?
        var access: [NetworkAccessLogEntry] = []
        var errors: [NetworkErrorLogEntry] = []
        var title: [String: String] = [:]
    }

    private let condition = NSCondition()
    private var state = State()
    private let onEvent: @Sendable (NetworkSourceEvent) -> Void
    private var thread: Thread?
    private let connector: HTTPClient.Connector

    /// A source for `url`; nothing is fetched until ``start()``. `onEvent` is called on the fetch
    /// thread.
    public init(url: URL, options: Options = Options(), onEvent: @escaping @Sendable (NetworkSourceEvent) -> Void = { _ in }) {
        self.url = url
        self.options = options
        self.onEvent = onEvent
        connector = HTTPClient.standardConnector
    }

    /// Starts fetching. Idempotent.
    public func start() {
        condition.lock()
        defer { condition.unlock() }
        guard thread == nil else { return }
        let t = Thread { [self] in run() }
        t.name = "tonearm-net"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    /// Stops fetching and wakes every reader (which then throws). Any thread; idempotent.
    public func cancel() {
        condition.lock()
        state.cancelled = true
        let ch = state.channel
        condition.broadcast()
        condition.unlock()
        ch?.cancel()
    }

    /// A new reader, at 0 (its id). After the fetching was cancelled it reads nothing.
    func addReader() -> Int {
        condition.withLock {
            let id = state.nextReader
            state.nextReader += 1
            if !state.cancelled { state.readers[id] = 0 }
            return id
        }
    }

    /// Ends reader `id` (it throws from now on; one waiting wakes); the last one stops the
    /// fetching. Any thread; idempotent.
    func cancel(reader id: Int) {
        let last = condition.withLock { () -> Bool in
            guard state.readers.removeValue(forKey: id) != nil else { return false }
            condition.broadcast()
            return state.readers.isEmpty
        }
        if last { cancel() }
    }

    /// A released reader: as ``cancel(reader:)``.
    func removeReader(_ id: Int) { cancel(reader: id) }

    /// Waits until the first response has come (true) or the source failed or was cancelled
    /// (false; see ``failure``), at most `timeout` seconds.
    public func waitUntilOpen(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !state.opened && state.failure == nil && !state.cancelled {
            if !condition.wait(until: deadline) { break }
        }
        return state.opened
    }

    // MARK: What is known

    /// The resource's length in bytes, when the server said (nil for endless streams).
    public var length: Int64? { condition.withLock { state.length } }
    /// Whether the server accepts ranges (a seek far ahead does not need the bytes before it).
    public var isSeekable: Bool { condition.withLock { state.seekable } }
    /// The content type the server gave.
    public var contentType: String? { condition.withLock { state.contentType } }
    /// The failure that ended the source, if it failed.
    public var failure: TonearmError? { condition.withLock { state.failure } }
    /// Whether everything there is has arrived.
    public var isFinished: Bool { condition.withLock { state.finished } }
    /// The byte ranges in memory, in order.
    public var loadedRanges: [Range<Int64>] { condition.withLock { state.chunks.ranges } }
    /// The requests made so far.
    public var accessLog: [NetworkAccessLogEntry] { condition.withLock { state.access } }
    /// The failures met so far (also those a retry overcame).
    public var errorLog: [NetworkErrorLogEntry] { condition.withLock { state.errors } }
    /// The latest ICY metadata fields.
    public var icyMetadata: [String: String] { condition.withLock { state.title } }
    /// Bytes available at `reader`'s position without waiting.
    func bytesAhead(reader: Int) -> Int64 {
        condition.withLock {
            guard let p = state.readers[reader] else { return 0 }
            return state.chunks.available(at: p)
        }
    }

    /// Where the reader furthest on reads (the fetcher keeps at most ``Options/maximumAhead``
    /// ahead of it). Under the lock.
    private var leadingReader: Int64 { state.readers.values.max() ?? 0 }

    // MARK: Reading (one reader thread)

    /// Reads up to `buffer.count` bytes at the read position, waiting for them when they have
    /// not arrived. Returns 0 at the end. Throws the source's failure, or
    /// ``TonearmError/invalidState(_:)`` after ``cancel()``.
    func read(into buffer: UnsafeMutableRawBufferPointer, reader: Int) throws(TonearmError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        condition.lock()
        defer { condition.unlock() }
        while true {
            guard let p = state.readers[reader] else {
                throw .invalidState("\(url.absoluteString): the network source was cancelled")
            }
            if let n = state.chunks.copy(at: p, into: buffer) {
                state.readers[reader] = p + Int64(n)
                condition.broadcast()  // the fetcher may wait for room ahead
                return n
            }
            if let l = state.length, p >= l { return 0 }
            if state.length == nil, state.finished, p >= state.chunks.end ?? 0 { return 0 }
            if state.cancelled { throw .invalidState("\(url.absoluteString): the network source was cancelled") }
            if let f = state.failure { throw f }
            // Not coming soon where the fetcher is (or it has finished, and these bytes lie in a
            // gap a far seek left): send it here.
            // A server that cannot seek sends the bytes in order: ahead of the fetcher they come
            // on this request (a new one would start from 0 again).
            let window = state.seekable ? options.seekAheadWindow : Int64.max
            let coming = !state.finished && (state.fetchPosition.map { p >= $0 && p - $0 <= window } ?? false)
            if !coming && state.restartAt != p && state.opened {
                state.restartAt = p
                state.channel?.cancel()  // wakes a fetcher reading the network
                condition.broadcast()    // and one waiting (backoff, room ahead, after the end)
            }
            condition.wait()
        }
    }

    /// Moves the read position (the bytes are fetched when read). Returns false for a position
    /// before 0 or past the end.
    @discardableResult
    func seek(to offset: Int64, reader: Int) -> Bool {
        condition.withLock {
            guard offset >= 0, state.length.map({ offset <= $0 }) ?? true, state.readers[reader] != nil else { return false }
            state.readers[reader] = offset
            condition.broadcast()  // the fetcher may wait for room ahead of a reader that moved on
            return true
        }
    }

    /// The read position of `reader`.
    func position(reader: Int) -> Int64 { condition.withLock { state.readers[reader] ?? 0 } }

    /// See ``NetworkByteSource/readTail(_:)``. The reader thread.
    func readTail(_ count: Int) -> [UInt8]? {
        guard count > 0, let (length, seekable) = condition.withLock({ state.opened ? (state.length, state.seekable) : nil }),
              let length, seekable else { return nil }
        let start = max(0, length - Int64(count))
        let began = Date()
        guard let response = try? HTTPClient.get(url, rangeStart: start, limits: options.limits, connector: connector),
              response.status == 206, response.contentRange?.start == start else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length - start))
        var got = 0
        while got < bytes.count {
            let n = bytes.withUnsafeMutableBytes { all -> Int in
                (try? response.read(into: UnsafeMutableRawBufferPointer(rebasing: all[got...]))) ?? 0
            }
            if n <= 0 { break }
            got += n
        }
        condition.withLock {
            state.access.append(NetworkAccessLogEntry(url: url.absoluteString, finalURL: response.url.absoluteString,
                                                      status: response.status, rangeStart: start, bytesTransferred: Int64(got),
                                                      transferDuration: Date().timeIntervalSince(began), isReconnect: false))
        }
        return got == bytes.count ? bytes : nil
    }

    // MARK: Fetching (the fetch thread)

    private func run() {
        var position: Int64 = 0
        var attempt = 0
        var reconnect = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var pacer = RequestPacer(burst: options.requestBurst, window: options.requestWindow)
        while true {
            if !pace(&pacer) { return }
            let restart = condition.withLock { () -> Int64?? in
                if state.cancelled { return .some(nil) }
                defer { state.restartAt = nil }
                return .some(state.restartAt)
            }
            guard case .some(let target) = restart else { return }
            if condition.withLock({ state.cancelled }) { return }
            if let target { position = target; reconnect = false; attempt = 0 }
            // Requesting (a resumption of a seekable resource, a seek, or a fresh join).
            let seekable = condition.withLock { state.seekable }
            let ask: Int64? = position > 0 && seekable ? position : nil
            if position > 0 { onEvent(.requested(offset: position, reconnect: reconnect)) }
            let response: HTTPResponse
            do {
                response = try HTTPClient.get(url, rangeStart: ask, headers: options.icyMetadata ? [("Icy-MetaData", "1")] : [],
                                              limits: options.limits, connector: connector,
                                              onChannel: { [self] ch in register(ch) })
            } catch {
                if condition.withLock({ state.cancelled }) { return }
                if condition.withLock({ state.restartAt != nil }) { continue }
                guard case .network(_, let failure) = error, canRetry(failure, opened: condition.withLock { state.opened }),
                      attempt < options.reconnectAttempts else {
                    fail(error)
                    return
                }
                attempt += 1
                if !backoff(attempt: attempt, failure: failure) { return }
                reconnect = true
                continue
            }
            // What the body holds.
            condition.withLock { state.fetchPosition = ask ?? 0 }
            var start = position
            let firstResponse = !condition.withLock { state.opened }
            if ask != nil, response.status == 200 {
                // The server ignored the range: the body starts at 0. It cannot seek: keep the
                // whole of it (what was loaded merges), within the limit.
                start = 0
                condition.withLock { state.seekable = false }
                if let total = response.contentLength ?? condition.withLock({ state.length }), total > options.maximumUnseekableBytes {
                    fail(.network(url: url.absoluteString, failure: .seekingUnsupported(length: total, limit: options.maximumUnseekableBytes)))
                    return
                }
            } else if let range = response.contentRange {
                start = range.start
            } else if ask == nil {
                start = 0
            }
            if firstResponse {
                let type = response.header("content-type")
                if let t = type?.lowercased(), t.hasPrefix("text/html") || t.hasPrefix("text/plain") {
                    fail(.network(url: url.absoluteString, failure: .notMedia(contentType: type, detail: "the server sent a \(t.split(separator: ";").first ?? "") page")))
                    return
                }
                let total: Int64? = response.contentRange?.total ?? (response.status == 200 ? response.contentLength : nil)
                let seekable = total != nil && (response.status == 206 || response.header("accept-ranges")?.lowercased() == "bytes")
                if !seekable, let total, total > options.maximumUnseekableBytes {
                    fail(.network(url: url.absoluteString, failure: .seekingUnsupported(length: total, limit: options.maximumUnseekableBytes)))
                    return
                }
                condition.withLock {
                    state.length = total
                    state.contentType = type
                    state.seekable = seekable
                    state.fetchPosition = start  // before `opened`: a reader must see it coming
                    state.opened = true
                    condition.broadcast()
                }
                onEvent(.opened(contentType: type, length: total, seekable: seekable))
            }
            var icy = response.header("icy-metaint").flatMap { Int($0) }.flatMap { $0 > 0 ? ICYDemuxer(metaint: $0) : nil }
            let logIndex = condition.withLock { () -> Int in
                state.access.append(NetworkAccessLogEntry(url: url.absoluteString, finalURL: response.url.absoluteString,
                                                          status: response.status, rangeStart: ask, bytesTransferred: 0,
                                                          transferDuration: 0, isReconnect: reconnect))
                return state.access.count - 1
            }
            let began = Date()
            position = start
            condition.withLock { state.fetchPosition = position }
            // Receiving.
            var ended = false
            var audio: [UInt8] = []
            while true {
                if !waitForRoom(position) { return }
                if condition.withLock({ state.restartAt != nil || state.cancelled }) { break }
                var n = 0
                var readFailure: NetworkFailure?
                buffer.withUnsafeMutableBytes { raw in
                    do throws(NetworkFailure) { n = try response.read(into: raw) } catch { readFailure = error }
                }
                if let error = readFailure {
                    if condition.withLock({ state.cancelled }) { return }
                    if condition.withLock({ state.restartAt != nil }) { break }
                    logFailure(error, action: "resuming")
                    break
                }
                if n == 0 { ended = true; break }
                attempt = 0
                condition.withLock {
                    state.access[logIndex].bytesTransferred += Int64(n)
                    state.access[logIndex].transferDuration = Date().timeIntervalSince(began)
                }
                let payload = buffer[0..<n]
                if icy != nil {
                    audio.removeAll(keepingCapacity: true)
                    let blocks = payload.withUnsafeBytes { icy!.feed($0, audio: &audio) }
                    store(audio[...], at: position)
                    position += Int64(audio.count)
                    for b in blocks where !b.isEmpty {
                        condition.withLock { state.title = b }
                        onEvent(.metadata(b))
                    }
                } else {
                    let held = store(payload, at: position)
                    position += Int64(payload.count)
                    if let held {
                        // The rest is here already (another reader's seek fetched it): on after it.
                        onEvent(.loaded)
                        if let length = condition.withLock({ state.length }), held >= length {
                            ended = true
                            position = length
                        } else {
                            condition.withLock { if state.restartAt == nil { state.restartAt = held } }
                        }
                        break
                    }
                    if let length = condition.withLock({ state.length }), position >= length {
                        // The last byte is here: the end now, not after one more read. A reader
                        // that asks for a restart in between (another reader's bytes, behind)
                        // would otherwise end this request without `.finished`.
                        onEvent(.loaded)
                        ended = true
                        break
                    }
                }
                onEvent(.loaded)
            }
            // Done with this answer (its end, a skip to bytes held, a restart, a drop): close
            // the connection now. Kept open while the fetcher waits for a seek back after the
            // end, it let the server go on filling the socket's buffers with bytes already held
            // (2.4 MB more in a run where the wait was long).
            response.cancel()
            if ended {
                let (length, endless) = condition.withLock { (state.length, state.length == nil && icy != nil) }
                if let length, position < length {
                    // Closed early without an error: a drop.
                    logFailure(.connectionDropped(afterBytes: position, detail: "the server closed the connection"), action: "resuming")
                } else if !endless {
                    condition.withLock {
                        state.finished = true
                        if state.length == nil { state.length = position }
                        state.fetchPosition = nil
                        condition.broadcast()
                    }
                    onEvent(.finished)
                    // Stay for seeks back into what was evicted (endless streams evict nothing they can seek).
                    if !waitForRestart() { return }
                    continue
                }
            }
            if condition.withLock({ state.restartAt != nil }) { continue }
            // A drop: resume with backoff.
            attempt += 1
            if attempt > options.reconnectAttempts {
                fail(.network(url: url.absoluteString, failure: .connectionDropped(afterBytes: position, detail: "\(options.reconnectAttempts) attempts to resume failed")))
                return
            }
            if !backoff(attempt: attempt, failure: .connectionDropped(afterBytes: position, detail: "resuming")) { return }
            reconnect = true
        }
    }

    private func register(_ channel: ByteChannel) {
        condition.withLock {
            state.channel = channel
            if state.cancelled || state.restartAt != nil { channel.cancel() }
        }
    }

    /// Whether a failure is worth retrying: network trouble after the source opened (not a
    /// status, a refused scheme, a TLS failure or bad content).
    private func canRetry(_ f: NetworkFailure, opened: Bool) -> Bool {
        guard opened else { return false }
        switch f {
        case .connectionFailed, .connectionDropped, .timedOut, .connectionRefused: return true
        case .httpStatus(let code, _): return code >= 500 || code == 408
        default: return false
        }
    }

    private func logFailure(_ f: NetworkFailure, action: String) {
        condition.withLock { state.errors.append(NetworkErrorLogEntry(url: url.absoluteString, failure: f, action: action)) }
    }

    /// Waits before retry `attempt`; false when cancelled meanwhile. A seek wakes it early.
    private func backoff(attempt: Int, failure: NetworkFailure) -> Bool {
        let delay = RetryBackoff.delay(attempt: attempt, maximum: options.maximumBackoff)
        logFailure(failure, action: "retrying in \(delay) s")
        onEvent(.retrying(attempt: attempt, delay: delay, failure: failure))
        let deadline = Date().addingTimeInterval(delay)
        condition.lock()
        defer { condition.unlock() }
        while !state.cancelled && state.restartAt == nil {
            if !condition.wait(until: deadline) { break }
        }
        return !state.cancelled
    }

    private func fail(_ error: TonearmError) {
        condition.withLock {
            if state.failure == nil { state.failure = error }
            state.fetchPosition = nil
            if case .network(_, let f) = error { state.errors.append(NetworkErrorLogEntry(url: url.absoluteString, failure: f, action: "gave up")) }
            condition.broadcast()
        }
        onEvent(.failed(error))
    }

    /// After the end: waits until a read asks for bytes that are not here (true) or cancel (false).
    private func waitForRestart() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !state.cancelled && state.restartAt == nil { condition.wait() }
        if state.restartAt != nil { state.finished = false }
        return !state.cancelled
    }

    /// Waits until the next request may go (``RequestPacer``) and notes it; false when cancelled.
    /// Seeks do not shorten the wait (the latest one is served after it).
    private func pace(_ pacer: inout RequestPacer) -> Bool {
        let wait = pacer.wait()
        if wait > 0 {
            let deadline = Date().addingTimeInterval(wait)
            condition.lock()
            while !state.cancelled {
                if !condition.wait(until: deadline) { break }
            }
            condition.unlock()
        }
        pacer.begin()
        return !condition.withLock { state.cancelled }
    }

    /// Waits while the fetcher is far enough ahead of the reader; false when cancelled. A
    /// resource whose server cannot seek is read whole without waiting (it is within
    /// ``Options/maximumUnseekableBytes``, and the reader may not ask for it again).
    private func waitForRoom(_ position: Int64) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !state.cancelled && state.restartAt == nil && (state.seekable || state.length == nil)
                && position - leadingReader > options.maximumAhead {
            condition.wait()
        }
        return !state.cancelled
    }

    /// Stores bytes that start at `position` (fetch thread), merging with the chunk they extend;
    /// for an endless stream, drops what lies far behind the readers. Returns where the bytes
    /// held from the end of these on end, when the fetcher has reached bytes it fetched before
    /// (after a seek of a reader ahead) and the server can seek: nothing to fetch twice.
    @discardableResult
    private func store(_ bytes: ArraySlice<UInt8>, at position: Int64) -> Int64? {
        guard !bytes.isEmpty else { return nil }
        condition.lock()
        defer { condition.unlock() }
        let end = position + Int64(bytes.count)
        state.chunks.store(bytes, at: position)
        var held: Int64?
        if state.seekable, state.length != nil, let i = state.chunks.index(holding: end) {
            held = state.chunks.chunks[i].end
        }
        if state.length == nil {
            // Behind the reader furthest back, but never more than the read-ahead behind the
            // one furthest on (a reader that lags that far reads on from where the stream is).
            let lead = leadingReader
            let back = max(state.readers.values.min() ?? lead, lead - options.maximumAhead)
            state.chunks.dropBehind(back, keeping: options.keptBehind, atLeast: 256 << 10)
        }
        state.fetchPosition = end
        condition.broadcast()
        return held
    }
}

