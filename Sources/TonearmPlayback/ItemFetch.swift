// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmNetwork

/// The network side of a ``PlayerItem``: a progressive download (a file, a radio stream) or an
/// HLS stream, and what the item asks of it — the logs, and how much audio has arrived ahead of
/// the playhead, in seconds.
///
/// Threading: every member may be used from any thread (the sources are thread-safe).
enum ItemFetch: Sendable {
    case progressive(NetworkByteSource)
    /// An HLS stream, and the seconds of its segments that have arrived (from its events).
    case hls(HLSByteSource, arrived: HLSArrival)

    /// Whether `url` names an HLS playlist (by its extension, as players do).
    static func isHLS(_ url: URL) -> Bool {
        url.pathExtension.lowercased() == "m3u8"
    }

    /// The fetching for an `http(s)` `url`: an HLS stream for an `.m3u8` playlist, else a
    /// progressive download. Nothing is fetched until ``start()``. Events come on the fetch
    /// thread; an HLS stream's segment arrivals are counted before `onHLSEvent` hears of them.
    static func make(url: URL, options: NetworkSourceOptions = NetworkSourceOptions(),
                     onNetworkEvent: @escaping @Sendable (NetworkSourceEvent) -> Void = { _ in },
                     onHLSEvent: @escaping @Sendable (HLSSourceEvent) -> Void = { _ in }) -> ItemFetch {
        if isHLS(url) {
            var hls = HLSSourceOptions()
            hls.limits = options.limits
            let arrived = HLSArrival()
            return .hls(HLSByteSource(url: url, options: hls, onEvent: countingArrivals(arrived, then: onHLSEvent)),
                        arrived: arrived)
        }
        return .progressive(NetworkByteSource(url: url, options: options, onEvent: onNetworkEvent))
    }

    /// An HLS event handler that adds each segment's duration to `arrived`, then calls `forward`.
    static func countingArrivals(_ arrived: HLSArrival,
                                 then forward: @escaping @Sendable (HLSSourceEvent) -> Void) -> @Sendable (HLSSourceEvent) -> Void {
        { e in
            if case .segmentLoaded(_, let duration, _) = e { arrived.add(duration) }
            forward(e)
        }
    }

    /// Starts fetching. Idempotent.
    func start() {
        switch self {
        case .progressive(let s): s.start()
        case .hls(let s, _): s.start()
        }
    }

    /// Starts fetching and opens the audio on it in streaming mode (playback starts before the
    /// whole body has come). Blocks while it connects, bounded by the network limits.
    func openFile(name: String) throws(TonearmError) -> AudioFile {
        start()
        return try AudioFile(byteSource: source, name: name, streaming: true)
    }

    /// The bytes the demuxer reads.
    var source: any ByteSource {
        switch self {
        case .progressive(let s): s
        case .hls(let s, _): s
        }
    }

    var accessLog: [NetworkAccessLogEntry] {
        switch self {
        case .progressive(let s): s.accessLog
        case .hls(let s, _): s.accessLog
        }
    }

    var errorLog: [NetworkErrorLogEntry] {
        switch self {
        case .progressive(let s): s.errorLog
        case .hls(let s, _): s.errorLog
        }
    }

    /// Whether nothing more will arrive: everything there is has, or the fetching failed for
    /// good (what has arrived is played, then the failure is met).
    var isFinished: Bool {
        switch self {
        case .progressive(let s): s.isFinished || s.failure != nil
        case .hls(let s, _): s.isFinished || s.failure != nil
        }
    }

    /// Stops fetching; a reader blocked on it wakes and fails.
    func cancel() {
        switch self {
        case .progressive(let s): s.cancel()
        case .hls(let s, _): s.cancel()
        }
    }

    /// How long the item is, once `file` has opened on it.
    func duration(file: AudioFile) -> PlayerItem.Duration {
        switch self {
        case .progressive: file.isLengthKnown ? .seconds(file.duration) : .indefinite
        case .hls(let s, _): s.duration.map { .seconds($0) } ?? .indefinite
        }
    }

    /// Whether a seek can go anywhere: a progressive file of known length, or a VOD HLS stream
    /// (radio and live streams have nowhere to go).
    func isSeekable(file: AudioFile) -> Bool {
        switch self {
        case .progressive(let s): s.length != nil && file.isLengthKnown
        case .hls(let s, _): s.duration != nil
        }
    }

    /// Seconds from the playhead (`now`) to the end of what has arrived contiguously: for a
    /// progressive download, a byte's time taken in proportion (bytes the demuxer has read into
    /// its own buffers count, as they should); for HLS, the segments that have arrived.
    func secondsAhead(now: Double, file: AudioFile) -> Double {
        switch self {
        case .progressive(let net):
            let position = net.position
            let end = net.loadedRanges.first { $0.lowerBound <= position && position <= $0.upperBound }?.upperBound ?? position
            return max(0, Double(end) / Self.bytesPerSecond(file: file, net: net) - now)
        case .hls(let s, let arrived):
            return max(0, s.startOffset + arrived.seconds - now)
        }
    }

    /// The parts of the timeline in memory.
    func loadedTimeRanges(now: Double, file: AudioFile) -> [TimeRange] {
        if case .progressive(let net) = self, let length = net.length, file.isLengthKnown, length > 0 {
            let d = file.duration
            return net.loadedRanges.map {
                TimeRange(start: Double($0.lowerBound) / Double(length) * d, end: Double($0.upperBound) / Double(length) * d)
            }
        }
        return [TimeRange(start: now, duration: secondsAhead(now: now, file: file))]
    }

    /// Whether the buffer is as full as it gets: everything has arrived, or (progressive) the
    /// read-ahead limit is reached.
    func isFull(options: NetworkSourceOptions) -> Bool {
        switch self {
        case .progressive(let net): net.isFinished || net.bytesAhead >= options.maximumAhead
        case .hls(let s, _): s.isFinished
        }
    }

    /// Bytes per second of the stored audio: from the length and duration, or the stated bit
    /// rate, or 128 kb/s.
    private static func bytesPerSecond(file: AudioFile, net: NetworkByteSource) -> Double {
        if let length = net.length, file.isLengthKnown, file.duration > 0 { return Double(length) / file.duration }
        if let bits = file.fileFormat.bitRate, bits > 0 { return Double(bits) / 8 }
        return 16_000
    }
}

/// The seconds of an HLS stream's segments that have arrived since it was joined (the sum of
/// the `#EXTINF` durations of the segments loaded), counted from its events on the fetch thread.
final class HLSArrival: Sendable {
    private let total = Mutex<Double>(0)
    var seconds: Double { total.withLock { $0 } }
    func add(_ duration: Double) { total.withLock { $0 += max(0, duration) } }
}
