// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore

/// The fetching behind an ``HLSByteSource``: its state (under one `NSCondition`), its thread
/// (`tonearm-hls`, which holds it until it ends), and the reader's side. Ends when the source
/// that owns it goes away (``cancel()``).
final class HLSFetcher: @unchecked Sendable {
    typealias Options = HLSSourceOptions

    let url: URL
    let options: Options

    /// What the store knows of a segment whose bytes (decrypted) it holds.
    private struct SegmentInfo {
        var sequence: Int
        var duration: Double
        /// Where the segment starts on the stream's timeline (seconds; ``startOffset`` for the first).
        var start: Double
    }

    private struct State {
        /// One chunk a segment, at its place in the stream.
        var pieces = ChunkStore<SegmentInfo>()
        /// The read positions of the readers not cancelled, by id (``HLSByteSource/makeReader()``).
        var readers: [Int: Int64] = [:]
        var nextReader = 0
        /// The end of what has arrived.
        var fetchedEnd: Int64 = 0
        /// Where the next segment starts on the stream's timeline (seconds).
        var fetchedEndTime = 0.0
        /// The duration of the last segment that arrived (0 before the first).
        var lastDuration = 0.0
        var opened = false
        var finished = false
        var cancelled = false
        var failure: TonearmError?
        var isLive = false
        var duration: Double?
        var startOffset = 0.0
        var variants: [Int] = []
        var currentVariant: Int?
        var measured: Double?
        var channel: ByteChannel?
        var access: [NetworkAccessLogEntry] = []
        var errors: [NetworkErrorLogEntry] = []
        /// Counts every sign of progress (bytes, responses, reloads, backoffs): a reader waits
        /// ``stallLimit`` from the last one.
        var activity = 0
        /// How long a reader waits without any progress before it fails.
        var stallLimit: Double
    }

    private let condition = NSCondition()
    private var state: State
    private let onEvent: @Sendable (HLSSourceEvent) -> Void
    private var thread: Thread?

    /// The fetch thread's own: the measurements (bytes, seconds) of the last segments.
    private var samples: [(bytes: Int, seconds: Double)] = []
    /// The fetch thread's own: keys by URI.
    private var keys: [URL: [UInt8]] = [:]

    init(url: URL, options: Options, onEvent: @escaping @Sendable (HLSSourceEvent) -> Void) {
        self.url = url
        self.options = options
        self.onEvent = onEvent
        state = State(stallLimit: Self.stallLimit(options, targetDuration: 10))
    }

    /// The longest a single step of the fetcher may take without progress: a connection and a
    /// read, a backoff, a reload interval.
    private static func stallLimit(_ o: Options, targetDuration: Double) -> Double {
        o.limits.connectTimeout + o.limits.readTimeout + o.maximumBackoff + 2 * targetDuration + 1
    }

    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard thread == nil else { return }
        let t = Thread { [self] in run() }
        t.name = "tonearm-hls"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    func cancel() {
        condition.lock()
        state.cancelled = true
        let ch = state.channel
        condition.broadcast()
        condition.unlock()
        ch?.cancel()
    }

    /// A new reader at 0 (its id); nil when the stream's first bytes are no longer kept (a
    /// reader went on past ``HLSSourceOptions/keptBehind``) or the fetching was cancelled.
    func addReader() -> Int? {
        condition.withLock {
            guard !state.cancelled, state.failure == nil, (state.pieces.start ?? state.fetchedEnd) == 0 else { return nil }
            let id = state.nextReader
            state.nextReader += 1
            state.readers[id] = 0
            return id
        }
    }

    /// A new reader at the start of the kept segment that holds `time` (seconds on the stream's
    /// timeline) — or, when that segment has not arrived yet, where it will (the next segment,
    /// or the first of a stream that has fetched nothing). Its id and the time its first byte
    /// starts at (nil: the stream's ``startOffset``, not known before it opened). Nil when no
    /// such place is kept, or the fetching was cancelled or failed (a joiner opens a stream of
    /// its own: a seek to the same time tries the network again).
    func addReader(at time: Double) -> (id: Int, start: Double?)? {
        condition.withLock {
            guard !state.cancelled, state.failure == nil else { return nil }
            let position: Int64
            let start: Double?
            if let c = state.pieces.chunks.last(where: { $0.info.start <= time + 1e-6 }),
               time < c.info.start + c.info.duration - 1e-6 || (state.finished && c.end == state.fetchedEnd) {
                (position, start) = (c.start, c.info.start)
            } else if state.opened, !state.finished, state.fetchedEndTime <= time + 1e-6,
                      state.fetchedEnd == 0 || time < state.fetchedEndTime + 1.5 * state.lastDuration,
                      (state.pieces.end ?? state.fetchedEnd) == state.fetchedEnd {
                (position, start) = (state.fetchedEnd, state.fetchedEndTime)
            } else if !state.opened, state.fetchedEnd == 0, options.startTime <= time + 1e-6 {
                (position, start) = (0, nil)
            } else {
                return nil
            }
            let id = state.nextReader
            state.nextReader += 1
            state.readers[id] = position
            return (id, start)
        }
    }

    /// Forgets what lies behind every reader: the segments that end ``HLSSourceOptions/keptBehind``
    /// bytes and ``HLSSourceOptions/keptBehindDuration`` seconds before the slowest one. Under
    /// the lock.
    private func trimBehindReaders() {
        guard let slowest = state.readers.values.min() else { return }
        let at = state.pieces.index(holding: slowest).map { state.pieces.chunks[$0].info.start } ?? state.fetchedEndTime
        let byBytes = slowest - options.keptBehind
        let byTime = at - options.keptBehindDuration
        state.pieces.removeChunks { $0.end <= byBytes && $0.info.start + $0.info.duration <= byTime + 1e-6 }
    }

    /// Ends reader `id` (it throws from now on; one waiting wakes, and the fetcher, which may
    /// have waited for it); the last one stops the fetching. Any thread; idempotent.
    func cancel(reader id: Int) {
        let last = condition.withLock { () -> Bool in
            guard state.readers.removeValue(forKey: id) != nil else { return false }
            // What lay behind only this reader may go.
            trimBehindReaders()
            condition.broadcast()
            return state.readers.isEmpty
        }
        if last { cancel() }
    }

    func waitUntilOpen(timeout: Double) -> Bool {
        waitFor(timeout: timeout) { $0.opened } && condition.withLock { state.opened }
    }

    func waitUntilFinished(timeout: Double) -> Bool {
        waitFor(timeout: timeout) { $0.finished } && condition.withLock { state.finished }
    }

    /// Waits until `done` holds, or the source failed or was cancelled; false after `timeout`.
    private func waitFor(timeout: Double, _ done: (State) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done(state) && state.failure == nil && !state.cancelled {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    // MARK: What is known

    var failure: TonearmError? { condition.withLock { state.failure } }
    var isLive: Bool { condition.withLock { state.isLive } }
    var duration: Double? { condition.withLock { state.duration } }
    var startOffset: Double { condition.withLock { state.startOffset } }
    var isFinished: Bool { condition.withLock { state.finished } }
    var variants: [Int] { condition.withLock { state.variants } }
    var currentVariantBandwidth: Int? { condition.withLock { state.currentVariant.map { state.variants[$0] } } }
    var measuredBandwidth: Double? { condition.withLock { state.measured } }
    var accessLog: [NetworkAccessLogEntry] { condition.withLock { state.access } }
    var errorLog: [NetworkErrorLogEntry] { condition.withLock { state.errors } }
    func position(reader: Int) -> Int64 { condition.withLock { state.readers[reader] ?? 0 } }
    func bufferedDuration(reader: Int) -> Double {
        condition.withLock {
            guard let p = state.readers[reader] else { return 0 }
            return state.pieces.chunks.reduce(0) { sum, piece in
                guard piece.end > p, !piece.bytes.isEmpty else { return sum }
                let unread = Double(piece.end - max(p, piece.start)) / Double(piece.bytes.count)
                return sum + piece.info.duration * unread
            }
        }
    }

    // MARK: Reading (one reader thread)

    func read(into buffer: UnsafeMutableRawBufferPointer, reader: Int) throws(TonearmError) -> Int {
        guard !buffer.isEmpty else { return 0 }
        condition.lock()
        defer { condition.unlock() }
        var seen = state.activity
        var deadline = Date().addingTimeInterval(state.stallLimit)
        while true {
            guard let p = state.readers[reader] else { throw .invalidState("\(url.absoluteString): the HLS source was cancelled") }
            if let n = state.pieces.copy(at: p, into: buffer) {
                state.readers[reader] = p + Int64(n)
                // Forget what lies far enough behind the slowest reader.
                trimBehindReaders()
                condition.broadcast()  // the fetcher may wait for room
                return n
            }
            if state.finished && p >= state.fetchedEnd { return 0 }
            if state.cancelled { throw .invalidState("\(url.absoluteString): the HLS source was cancelled") }
            if let f = state.failure { throw f }
            if !condition.wait(until: deadline) {
                if state.activity != seen {
                    seen = state.activity
                    deadline = Date().addingTimeInterval(state.stallLimit)
                } else {
                    throw .network(url: url.absoluteString, failure: .timedOut(phase: "waiting for the next segment", seconds: state.stallLimit))
                }
            }
        }
    }

    func seek(to offset: Int64, reader: Int) -> Bool {
        condition.withLock {
            let earliest = state.pieces.start ?? state.fetchedEnd
            guard offset >= 0, offset >= earliest, state.readers[reader] != nil else { return false }
            if state.finished && offset > state.fetchedEnd { return false }
            state.readers[reader] = offset
            condition.broadcast()
            return true
        }
    }

    // MARK: Fetching (the fetch thread)

    private var cancelledError: TonearmError { .invalidState("\(url.absoluteString): the HLS source was cancelled") }
    private var isCancelled: Bool { condition.withLock { state.cancelled } }

    private func run() {
        do throws(TonearmError) {
            try play()
        } catch {
            if isCancelled { return }
            fail(error)
        }
    }

    /// Loads the playlist(s), then fetches segment after segment until the end.
    private func play() throws(TonearmError) {
        // The first playlist: master or media. Fails at once.
        let first = try loadPlaylist(url, retries: 0, indicated: nil)
        var variants: [HLSVariant] = []
        var current = 0
        var media: HLSMediaPlaylist
        var mediaURL = url
        switch first {
        case .master(let master):
            variants = master.variants.enumerated().sorted { ($0.element.bandwidth, $0.offset) < ($1.element.bandwidth, $1.offset) }.map(\.element)
            if options.preferredPeakBitRate > 0 {
                current = variants.lastIndex { Double($0.bandwidth) <= options.preferredPeakBitRate } ?? 0
            }
            condition.withLock {
                state.variants = variants.map(\.bandwidth)
                state.currentVariant = current
            }
            mediaURL = variants[current].url
            media = try loadMedia(mediaURL, retries: 0, indicated: Double(variants[current].bandwidth))
        case .media(let m):
            media = m
        }
        let live = media.isLive
        let (vodStart, vodOffset) = Self.vodStart(media, at: options.startTime)
        var next = live ? liveStart(media) : vodStart
        condition.withLock {
            state.startOffset = live ? 0 : vodOffset
            state.fetchedEndTime = state.startOffset
            state.isLive = live
            state.duration = live ? nil : media.duration
            state.stallLimit = Self.stallLimit(options, targetDuration: media.targetDuration)
            state.opened = true
            state.activity += 1
            condition.broadcast()
        }
        onEvent(.opened(isLive: live, duration: live ? nil : media.duration))

        var loadStarted = Date()
        var lastChange = Date()
        var lastReloadChanged = true
        // Media playlists of finished (VOD) variants, kept for switching back.
        var ended: [Int: HLSMediaPlaylist] = [:]
        if !variants.isEmpty && !live { ended[current] = media }
        // The sequence number before which the variant last changed.
        var switchedBefore: Int?
        let stallTimeout = options.liveStallTimeout ?? max(4 * media.targetDuration, options.limits.readTimeout)

        while true {
            if isCancelled { throw cancelledError }
            if let segment = media.segment(sequence: next) {
                guard waitForRoom() else { throw cancelledError }
                // At a segment boundary: the variant the bandwidth asks for.
                if variants.count > 1 && options.adaptiveSwitching && switchedBefore != next {
                    let target = chooseVariant(variants, current: current)
                    if target != current {
                        let started = Date()
                        let replacement: HLSMediaPlaylist
                        if let known = ended[target] {
                            replacement = known
                        } else {
                            replacement = try loadMedia(variants[target].url, retries: options.retryAttempts,
                                                        indicated: Double(variants[target].bandwidth))
                        }
                        if !replacement.isLive { ended[target] = replacement }
                        let from = variants[current].bandwidth, to = variants[target].bandwidth
                        current = target
                        mediaURL = variants[target].url
                        media = replacement
                        loadStarted = started
                        if next < media.mediaSequence { next = media.mediaSequence }
                        switchedBefore = next  // one switch per segment boundary
                        condition.withLock { state.currentVariant = current }
                        onEvent(.variantSwitched(from: from, to: to, sequence: next))
                        continue
                    }
                }
                let indicated = variants.isEmpty ? nil : Double(variants[current].bandwidth)
                let bytes = try fetchSegment(segment, indicated: indicated)
                store(bytes, segment: segment)
                onEvent(.segmentLoaded(sequence: segment.sequence, duration: segment.duration, bytes: bytes.count))
                next += 1
                continue
            }
            if next < media.mediaSequence {
                // The reader fell behind a live window: go on from its start.
                condition.withLock {
                    state.errors.append(NetworkErrorLogEntry(url: media.url.absoluteString,
                                                             failure: .limitExceeded("segments \(next)..<\(media.mediaSequence) left the live window before they were fetched"),
                                                             action: "skipping to segment \(media.mediaSequence)"))
                }
                next = media.mediaSequence
                continue
            }
            if media.hasEndList {
                condition.withLock {
                    state.finished = true
                    state.activity += 1
                    condition.broadcast()
                }
                onEvent(.finished)
                return
            }
            // Live: reload after a target duration (half of one after an unchanged reload), and
            // never more than twice a second (a playlist may claim a target of 0.001 s).
            let interval = max(0.5, lastReloadChanged ? media.targetDuration : media.targetDuration / 2)
            guard sleep(until: loadStarted.addingTimeInterval(interval)) else { throw cancelledError }
            loadStarted = Date()
            let reloaded = try loadMedia(mediaURL, retries: options.retryAttempts,
                                         indicated: variants.isEmpty ? nil : Double(variants[current].bandwidth))
            let added = max(0, reloaded.endSequence - media.endSequence)
            lastReloadChanged = reloaded.endSequence != media.endSequence || reloaded.hasEndList != media.hasEndList
            media = reloaded
            condition.withLock {
                state.activity += 1
                condition.broadcast()
            }
            onEvent(.playlistReloaded(newSegments: added))
            if lastReloadChanged {
                lastChange = Date()
            } else if Date().timeIntervalSince(lastChange) > stallTimeout {
                throw .network(url: mediaURL.absoluteString, failure: .timedOut(phase: "waiting for the live playlist to grow", seconds: stallTimeout))
            }
        }
    }

    /// Where a VOD playlist starts for `time`: the sequence number of the segment that holds it
    /// (the last one past the end) and the time that segment starts at.
    static func vodStart(_ media: HLSMediaPlaylist, at time: Double) -> (sequence: Int, offset: Double) {
        var start = 0.0
        for (i, s) in media.segments.enumerated() {
            if time < start + s.duration || i == media.segments.count - 1 { return (media.mediaSequence + i, start) }
            start += s.duration
        }
        return (media.mediaSequence, 0)
    }

    /// Where a live playlist starts: the last segment from which at least
    /// ``HLSSourceOptions/liveStartTargetDurations`` target durations remain (the first one when
    /// the playlist is shorter).
    private func liveStart(_ media: HLSMediaPlaylist) -> Int {
        let wanted = options.liveStartTargetDurations * media.targetDuration
        var total = 0.0
        for (i, s) in media.segments.enumerated().reversed() {
            total += s.duration
            if total >= wanted - 1e-9 { return media.mediaSequence + i }
        }
        return media.mediaSequence
    }

    /// The variant to fetch the next segment from (see ``HLSByteSource``): up to the highest
    /// whose bandwidth × the factor is measured, down when the measurement (or the last
    /// segment's) falls below the current one's.
    private func chooseVariant(_ variants: [HLSVariant], current: Int) -> Int {
        guard let measured = condition.withLock({ state.measured }), let last = samples.last else { return current }
        // The lower of the window's and the last segment's: quick to go down, slow to go up.
        // Up needs factor × the higher BANDWIDTH, down happens below the current one: after a
        // switch either way the same estimate never asks for the way back.
        let estimate = min(measured, 8 * Double(last.bytes) / max(last.seconds, 1e-4))
        let cap = options.preferredPeakBitRate > 0 ? options.preferredPeakBitRate : .infinity
        var up = current
        for i in (current + 1)..<variants.count {
            let b = Double(variants[i].bandwidth)
            if b * options.switchUpFactor <= estimate && b <= cap { up = i }
        }
        if up != current { return up }
        if estimate < Double(variants[current].bandwidth) && current > 0 {
            return (0..<current).last { Double(variants[$0].bandwidth) <= estimate } ?? 0
        }
        return current
    }

    /// Waits until `deadline` (true) or cancel (false).
    private func sleep(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !state.cancelled {
            if !condition.wait(until: deadline) { break }
        }
        return !state.cancelled
    }

    /// Waits while enough is ahead of the slowest reader (what is kept is bounded as with one
    /// reader); false when cancelled.
    private func waitForRoom() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !state.cancelled {
            let p = state.readers.values.min() ?? state.fetchedEnd
            let ahead = state.pieces.chunks.filter { $0.end > p }.count
            if ahead < options.maximumSegmentsAhead && state.fetchedEnd - p < options.maximumBytesAhead { break }
            condition.wait()
        }
        return !state.cancelled
    }

    private func store(_ bytes: [UInt8], segment: HLSSegment) {
        condition.withLock {
            state.pieces.append(bytes, at: state.fetchedEnd,
                                info: SegmentInfo(sequence: segment.sequence, duration: segment.duration, start: state.fetchedEndTime))
            state.fetchedEnd += Int64(bytes.count)
            state.fetchedEndTime += segment.duration
            state.lastDuration = segment.duration
            state.activity += 1
            condition.broadcast()
        }
    }

    private func fail(_ error: TonearmError) {
        condition.withLock {
            if state.failure == nil { state.failure = error }
            if case .network(let u, let f) = error { state.errors.append(NetworkErrorLogEntry(url: u, failure: f, action: "gave up")) }
            condition.broadcast()
        }
        onEvent(.failed(error))
    }

    // MARK: Requests

    /// A playlist, parsed (against the address that answered, after redirects).
    private func loadPlaylist(_ url: URL, retries: Int, indicated: Double?) throws(TonearmError) -> HLSPlaylist {
        let (bytes, finalURL, _) = try download(url, kind: .playlist, sequence: nil, indicated: indicated,
                                                maximumBytes: options.playlistLimits.maximumBytes, retries: retries, resume: false)
        return try HLSPlaylist.parse(bytes, url: finalURL, limits: options.playlistLimits)
    }

    /// A variant's playlist, which must be a media playlist.
    private func loadMedia(_ url: URL, retries: Int, indicated: Double?) throws(TonearmError) -> HLSMediaPlaylist {
        switch try loadPlaylist(url, retries: retries, indicated: indicated) {
        case .media(let m): return m
        case .master:
            throw .invalidPlaylist(path: url.absoluteString, line: nil, reason: "a variant's playlist is itself a master playlist")
        }
    }

    /// A segment's bytes, decrypted; measured for the bandwidth.
    private func fetchSegment(_ segment: HLSSegment, indicated: Double?) throws(TonearmError) -> [UInt8] {
        var key: [UInt8]?
        if let k = segment.key, k.method == .aes128, let keyURL = k.url {
            key = try fetchKey(keyURL)
        }
        let (bytes, _, seconds) = try download(segment.url, kind: .media, sequence: segment.sequence, indicated: indicated,
                                               maximumBytes: options.maximumSegmentBytes, retries: options.retryAttempts, resume: true)
        samples.append((bytes.count, seconds))
        if samples.count > max(1, options.bandwidthWindow) { samples.removeFirst(samples.count - max(1, options.bandwidthWindow)) }
        let measured = 8 * Double(samples.reduce(0) { $0 + $1.bytes }) / max(samples.reduce(0) { $0 + $1.seconds }, 1e-4)
        condition.withLock { state.measured = measured }
        guard let key, let k = segment.key else { return bytes }
        let clear: [UInt8]
        do throws(NetworkFailure) {
            clear = try AES128.decryptCBC(bytes, key: key, iv: k.iv(forSequence: segment.sequence))
        } catch {
            throw .network(url: segment.url.absoluteString, failure: error)
        }
        if segment.url.pathExtension.lowercased() == "ts", clear.first != 0x47 {
            throw .network(url: segment.url.absoluteString,
                           failure: .decryptionFailed(detail: "the decrypted segment is not MPEG-TS: a wrong key or IV"))
        }
        return clear
    }

    /// The 16-byte key at `url`, fetched once.
    private func fetchKey(_ url: URL) throws(TonearmError) -> [UInt8] {
        if let k = keys[url] { return k }
        let (bytes, _, _) = try download(url, kind: .key, sequence: nil, indicated: nil, maximumBytes: 1024,
                                         retries: options.retryAttempts, resume: false)
        guard bytes.count == 16 else {
            throw .network(url: url.absoluteString, failure: .decryptionFailed(detail: "the key has \(bytes.count) bytes, not 16"))
        }
        keys[url] = bytes
        return bytes
    }

    /// Whether a failure of a segment, key or reload is worth retrying: network trouble and
    /// error statuses (a live edge may answer 404 for a moment), not a refused scheme, TLS,
    /// bad content or a limit.
    private func canRetry(_ error: TonearmError) -> Bool {
        guard case .network(_, let f) = error else { return false }
        switch f {
        case .connectionFailed, .connectionDropped, .timedOut, .connectionRefused, .httpStatus: return true
        default: return false
        }
    }

    /// GETs `url` whole (at most `maximumBytes`), retrying `retries` times with backoff. With
    /// `resume`, a dropped body continues with a Range request where it stopped (a server that
    /// ignores ranges is read again and the known part skipped); without, it starts over.
    /// Returns the bytes, the address that answered, and the seconds spent receiving.
    private func download(_ url: URL, kind: NetworkRequestKind, sequence: Int?, indicated: Double?, maximumBytes: Int,
                          retries: Int, resume: Bool) throws(TonearmError) -> (bytes: [UInt8], finalURL: URL, seconds: Double) {
        var data: [UInt8] = []
        var attempt = 0
        var seconds = 0.0
        var reconnect = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let what = kind == .playlist ? "the playlist" : kind == .key ? "the key" : "the segment"
        while true {
            if isCancelled { throw cancelledError }
            if !resume { data.removeAll(keepingCapacity: true) }
            let ask: Int64? = data.isEmpty ? nil : Int64(data.count)
            let began = Date()
            var failure: TonearmError
            do throws(TonearmError) {
                let response = try HTTPClient.get(url, rangeStart: ask, limits: options.limits, onChannel: { [self] ch in register(ch) })
                let index = condition.withLock { () -> Int in
                    state.access.append(NetworkAccessLogEntry(url: url.absoluteString, finalURL: response.url.absoluteString,
                                                              status: response.status, rangeStart: ask, bytesTransferred: 0,
                                                              transferDuration: 0, isReconnect: reconnect, kind: kind,
                                                              mediaSequence: sequence, indicatedBitrate: indicated))
                    state.activity += 1
                    condition.broadcast()
                    return state.access.count - 1
                }
                if let type = response.header("content-type"), type.lowercased().hasPrefix("text/html") {
                    throw .network(url: url.absoluteString, failure: .notMedia(contentType: type, detail: "the server sent an HTML page instead of \(what)"))
                }
                var skip: Int64 = 0
                if let ask {
                    if let range = response.contentRange, range.start <= ask {
                        skip = ask - range.start
                    } else if response.status == 200 {
                        skip = ask  // the server ignored the range: the body starts at 0
                    } else {
                        throw .network(url: url.absoluteString, failure: .badResponse(detail: "a resumption at \(ask) answered without a usable Content-Range"))
                    }
                }
                while true {
                    var n = 0
                    var readFailure: NetworkFailure?
                    buffer.withUnsafeMutableBytes { raw in
                        do throws(NetworkFailure) { n = try response.read(into: raw) } catch { readFailure = error }
                    }
                    if let readFailure { throw .network(url: url.absoluteString, failure: readFailure) }
                    if n == 0 { break }
                    var piece = buffer[0..<n]
                    if skip > 0 {
                        let s = Int(min(skip, Int64(n)))
                        skip -= Int64(s)
                        piece = piece.dropFirst(s)
                    }
                    data += piece
                    if data.count > maximumBytes {
                        throw .network(url: url.absoluteString, failure: .limitExceeded("\(what) is larger than \(maximumBytes) bytes"))
                    }
                    condition.withLock {
                        state.access[index].bytesTransferred += Int64(n)
                        state.access[index].transferDuration = Date().timeIntervalSince(began)
                        state.activity += 1
                    }
                }
                seconds += Date().timeIntervalSince(began)
                unregister()
                return (data, response.url, seconds)
            } catch {
                failure = error
            }
            unregister()
            seconds += Date().timeIntervalSince(began)
            if isCancelled { throw cancelledError }
            guard attempt < retries, canRetry(failure), case .network(_, let f) = failure else { throw failure }
            attempt += 1
            guard backoff(attempt: attempt, url: url, failure: f) else { throw cancelledError }
            reconnect = true
        }
    }

    /// Forgets the channel of a request that is over (``cancel()`` then has nothing to wake).
    private func unregister() {
        condition.withLock { state.channel = nil }
    }

    private func register(_ channel: ByteChannel) {
        condition.withLock {
            state.channel = channel
            if state.cancelled { channel.cancel() }
        }
    }

    /// Waits before retry `attempt`; false when cancelled meanwhile.
    private func backoff(attempt: Int, url: URL, failure: NetworkFailure) -> Bool {
        let delay = RetryBackoff.delay(attempt: attempt, maximum: options.maximumBackoff)
        condition.withLock {
            state.errors.append(NetworkErrorLogEntry(url: url.absoluteString, failure: failure, action: "retrying in \(delay) s"))
            state.activity += 1
        }
        onEvent(.retrying(attempt: attempt, delay: delay, failure: failure))
        let ok = sleep(until: Date().addingTimeInterval(delay))
        condition.withLock { state.activity += 1 }
        return ok
    }
}
