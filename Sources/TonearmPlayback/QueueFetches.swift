// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmNetwork

/// The network items a ``QueuePlayer`` opened lately, by queue entry, and what of each has
/// arrived: the parts of the current item in memory (``QueuePlayer/loadedTimeRanges``, what a
/// seek bar shows as buffered), and a call to the ``whenGrown(_:)`` handler each time they have
/// grown enough to draw again — by half a percent of the stream (64 KB when its length is unknown), a segment of an
/// HLS stream, or its end — not on every chunk a fast server sends.
///
/// Holds nothing alive: the files and their sources are referred to weakly (a file closed by
/// the queue lets its download go), and at most the last ``kept`` openings are remembered.
///
/// Threading: ``open(_:key:)`` on the queue's worker threads; the handler is called on a fetch's
/// own thread (or the opening one); everything else from any thread.
final class QueueFetches: Sendable {
    /// How many openings are remembered (the current item, the next, a crossfade's partner, a
    /// restart's re-opening).
    static let kept = 6

    private final class Opened: @unchecked Sendable {
        let key: UInt64
        weak var file: AudioFile?
        weak var progressive: NetworkByteSource?
        weak var hls: HLSByteSource?
        let arrived: HLSArrival?
        /// Bytes that had arrived when the handler was last called (progressive streams). Under
        /// the `opened` lock.
        var reportedBytes: Int64 = 0

        init(key: UInt64, fetch: ItemFetch, file: AudioFile) {
            self.key = key
            self.file = file
            switch fetch {
            case .progressive(let s):
                progressive = s
                arrived = nil
            case .hls(let s, let a):
                hls = s
                arrived = a
            }
        }

        var fetch: ItemFetch? {
            if let progressive { return .progressive(progressive) }
            if let hls, let arrived { return .hls(hls, arrived: arrived) }
            return nil
        }
    }

    private let opened = Mutex<[Opened]>([])
    private let onGrew = Mutex<(@Sendable (UInt64) -> Void)?>(nil)

    init() {}

    /// Sets what is called with an entry's key when what has arrived of its stream grew enough
    /// to be drawn again (set once, by the queue, before it opens anything).
    func whenGrown(_ f: @escaping @Sendable (UInt64) -> Void) { onGrew.withLock { $0 = f } }

    private func grew(_ key: UInt64) { onGrew.withLock { $0 }?(key) }

    /// Opens `item` as ``QueuePlayer`` does — a network stream through an ``ItemFetch`` (in
    /// streaming mode), a file from its path — and, for a stream opened for entry `key`,
    /// remembers it. Blocks while a stream connects (bounded by the network limits).
    func open(_ item: QueueItem, key: UInt64?) throws(TonearmError) -> AudioFile {
        guard item.isRemote else { return try AudioFile(path: item.path, audioStream: item.audioStream) }
        guard let key else { return try ItemFetch.make(url: item.url).openFile(name: item.url.absoluteString) }
        let fetch = ItemFetch.make(url: item.url, onNetworkEvent: { [weak self] e in
            switch e {
            case .loaded: self?.loaded(key: key)
            case .finished: self?.grew(key)
            default: break
            }
        }, onHLSEvent: { [weak self] e in
            switch e {
            case .segmentLoaded, .finished: self?.grew(key)
            default: break
            }
        })
        let file = try fetch.openFile(name: item.url.absoluteString)
        let o = Opened(key: key, fetch: fetch, file: file)
        opened.withLock { all in
            all.removeAll { $0.key == key || $0.file == nil }
            all.append(o)
            if all.count > Self.kept { all.removeFirst(all.count - Self.kept) }
        }
        grew(key)
        return file
    }

    /// The latest opening for entry `key`.
    private func entry(_ key: UInt64) -> Opened? { opened.withLock { all in all.last { $0.key == key } } }

    /// The parts of entry `key`'s stream in memory, in seconds of the item, with the playhead at
    /// `now`: empty when `key` is not a stream opened lately (a file: all of it is there).
    func loadedTimeRanges(key: UInt64, now: Double) -> [TimeRange] {
        guard let o = entry(key), let file = o.file, let fetch = o.fetch else { return [] }
        return fetch.loadedTimeRanges(now: now, file: file)
    }

    /// The tags entry `key`'s stream carries (a FLAC's comments, an MP3's ID3 tag), as read
    /// when it was opened; nil when `key` is not a stream opened lately.
    func metadata(key: UInt64) -> AudioMetadata? {
        entry(key)?.file?.metadata
    }

    /// More bytes of entry `key`'s stream arrived: the handler when they add up to enough since
    /// its last call (events before the opening is remembered are left: it tells once remembered).
    private func loaded(key: UInt64) {
        guard let o = entry(key), let s = o.progressive else { return }
        let bytes = s.loadedRanges.reduce(Int64(0)) { $0 + Int64($1.count) }
        let step = s.length.map { max(1, $0 / 200) } ?? 64 * 1024
        let due = opened.withLock { _ -> Bool in
            guard bytes - o.reportedBytes >= step || bytes < o.reportedBytes else { return false }
            o.reportedBytes = bytes
            return true
        }
        if due { grew(key) }
    }
}
