// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmPlayback
import TonearmRender
import TonearmTestSupport

/// A queue's events are lossless (issue 18's long run: `tonearm play` on an untimed output said
/// "Done: 861 played" after 1,000 had played — its busy consumer fell more than the stream's
/// 1,024 buffered events behind, and the oldest were dropped).
@Suite struct QueueEventsLosslessTests {
    @Test func aConsumerThatReadsOnlyAfterTheEndStillSeesEveryItemStart() async throws {
        let dir = try TempDir("queue-lossless")
        defer { dir.remove() }
        let tick = dir.file("tick.wav")
        try Fixtures.tone(path: tick, codecArgs: ["-c:a", "pcm_f32le"], seconds: 0.01, rate: 48000)
        let count = 1_500  // several events an item: far more than the old 1,024 buffered
        let q = QueuePlayer(items: (0..<count).map { _ in QueueItem(path: tick) }, output: { NullOutput(untimed: true) })
        defer { q.stop() }
        let late = q.events  // subscribed now, read only after the queue has finished
        let collector = eventsUntilFinished(q.events)
        q.play()
        _ = try await finished(collector, timeout: 120)
        var starts = 0
        for await e in late {
            if case .currentItemChanged(_, .some) = e { starts += 1 }
            if e == .finished { break }
        }
        #expect(starts == count, "\(starts) item starts seen of \(count)")
    }
}
