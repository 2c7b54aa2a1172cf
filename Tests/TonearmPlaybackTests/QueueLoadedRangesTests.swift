// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A queue tells what has arrived of its current network stream (issue 21: the web page's
/// buffered part), from a real HTTP server on 127.0.0.1 that sends slower than the stream
/// plays, to the real-time null output (the stream is still current when its last byte comes).
@Suite(.serialized) struct QueueLoadedRangesTests {
    /// What has arrived of the current stream (AVPlayerItem's `loadedTimeRanges`, the web page's
    /// buffered part): told as it grows while a throttled server sends it, from the start to
    /// the whole item once it has all come; nothing for a file.
    @Test func whatHasArrivedOfTheCurrentStreamIsToldAsItGrows() async throws {
        let dir = try TempDir("net-queue-loaded")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("song.flac"), codecArgs: ["-c:a", "flac"], seconds: 6)
        try Fixtures.tone(path: dir.file("local.flac"), codecArgs: ["-c:a", "flac"], seconds: 0.5)
        let size = try #require(FileManager.default.attributesOfItem(atPath: dir.file("song.flac"))[.size] as? Int)
        let duration = try AudioFile(path: dir.file("song.flac")).duration
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // About three seconds to send it all.
        let song = QueueItem(pathOrURL: server.url("/song.flac", query: ["rate": String(size / 3)]).absoluteString)
        let local = QueueItem(path: dir.file("local.flac"))
        let q = QueuePlayer(items: [song, local], output: { NullOutput() })
        defer { q.stop() }
        let changes = q.loadedTimeRangeChanges
        let events = q.events
        q.play()
        let told = Mutex<[[TimeRange]]>([])
        _ = try await waitForEvent(changes, timeout: 60, "the whole stream told as arrived") { ranges in
            told.withLock { $0.append(ranges) }
            return ranges.count == 1 && ranges[0].end >= duration - 0.001
        }
        let all = told.withLock { $0 }
        // Each a part from the start (one download, no seek), growing, short of the end until the last.
        #expect(all.allSatisfy { $0.count == 1 && $0[0].start == 0 }, "\(all)")
        let ends = all.compactMap(\.first?.end)
        #expect(zip(ends, ends.dropFirst()).allSatisfy { $0 <= $1 }, "\(ends)")
        #expect(ends.filter { $0 > 0.05 * duration && $0 < 0.9 * duration }.count >= 2, "told while arriving: \(ends)")
        #expect(abs(ends.last! - duration) < 0.001)
        // The next item is a file: nothing to tell of it.
        _ = try await waitForEvent(events, timeout: 30, "the file current") {
            if case .currentItemChanged(index: 1, _) = $0 { return true }
            return false
        }
        #expect(q.loadedTimeRanges.isEmpty)
    }
}
