// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCompat
import TonearmTestSupport

/// KVO as AVFoundation code writes it, over Tonearm's Observable player and item (issue 23):
/// `.initial` is sent before `addObserver` returns, a change brings the new and old values and
/// the context; nothing is sent after `removeObserver`; an unknown key is never sent (and does
/// not crash). And the CoreMedia helpers the seed's stream player uses.
@Suite(.serialized) final class KeyValueObservingTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("compat-kvo") }
    deinit { dir.remove() }

    /// An observer as iOS code writes one (with the protocol Linux needs).
    final class Watcher: NSKeyValueObserving, Sendable {
        let seen = Mutex<[String]>([])
        let (stream, sink) = AsyncStream<String>.makeStream()

        func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?,
                          context: UnsafeMutableRawPointer?) {
            let new = change?[.newKey].map { "\($0)" } ?? "none"
            let old = change?[.oldKey].map { "\($0)" } ?? "none"
            let entry = "\(keyPath ?? "-") new=\(new) old=\(old) kind=\(change?[.kindKey] as? UInt ?? 0) ctx=\(context.map { Int(bitPattern: $0) } ?? 0)"
            seen.withLock { $0.append(entry) }
            sink.yield(entry)
        }
    }

    @Test func theItemsStatusIsObservedWithInitialNewOldAndContext() async throws {
        let path = dir.file("tone.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 0.5)
        let item = AVPlayerItem(url: URL(fileURLWithPath: path))
        let watcher = Watcher()
        item.addObserver(watcher, forKeyPath: "status", options: [.initial, .new, .old], context: UnsafeMutableRawPointer(bitPattern: 42))
        #expect(watcher.seen.withLock { $0 } == ["status new=unknown old=none kind=1 ctx=42"], "`.initial` is sent before addObserver returns")
        let player = AVPlayer(playerItem: item, output: { NullOutput() })
        let ready = try await waitForEvent(watcher.stream, "readyToPlay observed") { $0.hasPrefix("status new=ready") }
        #expect(ready == "status new=ready to play old=unknown kind=1 ctx=42")
        #expect(item.status == .readyToPlay && !(item.status == .failed) && item.status != .failed)
        #expect(CMTimeGetSeconds(item.duration) == 0.5)
        item.removeObserver(watcher, forKeyPath: "status")
        // Removing again is logged, not fatal.
        item.removeObserver(watcher, forKeyPath: "status")
        _ = player
    }

    @Test func nothingIsSentAfterRemovalNorForAnUnknownKey() async throws {
        let player = AVPlayer(output: { NullOutput() })
        let a = Watcher(), b = Watcher()
        player.addObserver(a, forKeyPath: "rate", options: [.new])
        player.addObserver(a, forKeyPath: "no such key", options: [.initial, .new])
        player.rate = 1
        _ = try await waitForEvent(a.stream, "the rate's change") { $0 == "rate new=1.0 old=none kind=1 ctx=0" }
        player.removeObserver(a, forKeyPath: "rate")
        player.addObserver(b, forKeyPath: "rate", options: [.new])
        player.rate = 0
        _ = try await waitForEvent(b.stream, "the second change, to b") { $0 == "rate new=0.0 old=none kind=1 ctx=0" }
        // Every notification is sent on one serial queue, and `.initial` before addObserver
        // returns: once this returns, whatever the second change sent has been sent.
        player.addObserver(b, forKeyPath: "timeControlStatus", options: [.initial])
        #expect(a.seen.withLock { $0 } == ["rate new=1.0 old=none kind=1 ctx=0"], "a removed observer heard nothing more")
        player.removeObserver(b, forKeyPath: "rate")
        player.removeObserver(b, forKeyPath: "timeControlStatus")
    }

    @Test func theCoreMediaHelpersOfTheStreamPlayer() {
        let interval = CMTime(seconds: 0.1, preferredTimescale: CMTimeScale(NSEC_PER_SEC))
        #expect(interval.value == 100_000_000 && interval.timescale == 1_000_000_000)
        #expect(CMTimeGetSeconds(interval) == 0.1)
        let range = TimeRange(start: 1, duration: 2.5).timeRangeValue
        #expect(CMTimeGetSeconds(range.start) + CMTimeGetSeconds(range.duration) == 3.5)
        #expect(range.end == CMTime(seconds: 3.5, preferredTimescale: 600))
        #expect(TimeRange(timeRange: range) == TimeRange(start: 1, duration: 2.5))
        #expect(CMTimeGetSeconds(PlayerItem.Duration.seconds(4)) == 4)
        #expect(CMTimeGetSeconds(PlayerItem.Duration.unknown).isNaN && CMTimeGetSeconds(PlayerItem.Duration.indefinite).isNaN,
                "an indefinite duration reads as NaN, as on iOS")
        let unknown: PlayerItem.Status? = .unknown
        #expect(!(unknown == .failed) && unknown != .failed)
    }
}
