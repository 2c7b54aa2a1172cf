// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A queue's restarts that keep what was rendered (a ReplayGain change re-schedules what follows
/// with the new gain) through an untimed output: the file must hold every sample of the queue
/// once, in order — nothing written twice, no silence between a stop and the play after it.
/// Before `AudioPlayerNode.withRenderHeld` the file output's thread rendered on while a restart
/// read the node's time, stopped and re-scheduled it: a render call between the reading and the
/// stop was written and then written again, and the calls between the stop and the play wrote
/// silence (4 in 6 runs failed, up to three times the queue's length written).
@Suite final class RestartExactnessTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("restartexact") }
    deinit { dir.remove() }

    /// Two chirps (no period: a sample repeated or skipped anywhere shows).
    func chirps() throws -> (paths: [String], expected: [[Float]]) {
        let a = dir.file("a.wav"), b = dir.file("b.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.4*sin(2*PI*(100+200*t)*t)|0.3*sin(2*PI*(150+90*t)*t):s=44100:d=6",
                             "-c:a", "pcm_f32le", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.4*sin(2*PI*(300+100*t)*t)|0.3*sin(2*PI*(250+70*t)*t):s=44100:d=6",
                             "-c:a", "pcm_f32le", b])
        let wa = try readWAV(a).channels, wb = try readWAV(b).channels
        return ([a, b], zip(wa, wb).map { $0 + $1 })
    }

    /// Where the frames written from `frame` on (and 4,096 frames later) come from in `expected`:
    /// a block written twice, skipped or of an earlier schedule shows as another frame.
    static func origin(of got: [Float], at frame: Int, in expected: [Float]) -> String {
        func source(_ f: Int) -> String {
            let n = 256
            guard f + n <= got.count else { return "frame \(f): past the end" }
            let run = Array(got[f..<(f + n)])
            if run.allSatisfy({ $0 == 0 }) { return "frame \(f) is silence" }
            let at = (0...(expected.count - n)).first { i in expected[i] == run[0] && Array(expected[i..<(i + n)]) == run }
            return "frame \(f) is expected's \(at.map(String.init) ?? "nowhere")"
        }
        return source(frame) + ", " + source(frame + 4096)
    }

    /// Plays `q` to its end while `perturb(n)` is called (n = 0, 1, …) between task yields, until
    /// the queue finishes or `limit` calls were made; returns the number of calls.
    func playPerturbing(_ q: QueuePlayer, limit: Int, _ perturb: (Int) -> Void) async throws -> Int {
        let collector = eventsUntilFinished(q.events)
        let done = Mutex(false)
        let watcher = Task { _ = await collector.value; done.withLock { $0 = true } }
        q.play()
        var n = 0
        while !done.withLock({ $0 }) && n < limit {
            perturb(n)
            n += 1
            await Task.yield()
        }
        _ = try await finished(collector, timeout: 60)
        _ = await watcher.value
        return n
    }

    @Test func restartsThroughTheFileOutputWriteEverySampleOnce() async throws {
        let (paths, expected) = try chirps()
        // Three plays: the restarts land at other moments of the render each time.
        for round in 0..<3 {
            let out = dir.file("out-\(round).wav")
            let q = QueuePlayer(items: paths.map { QueueItem(path: $0) }, output: { FileOutput(path: out) })
            defer { q.stop() }
            // ReplayGain toggled (no tags: the gain stays 1, the restart happens) until the end.
            let toggles = try await playPerturbing(q, limit: 4000) { q.setReplayGain($0 % 2 == 0 ? .track : .off) }
            // What a failure needs to be read: how many restarts, and whether the node rendered
            // silence for want of decoded data (the queue's underruns: the node's late data).
            let context = "\(toggles) toggles, \(q.underrunCount) underruns"
            let got = try readWAV(out).channels
            #expect(got[0].count == expected[0].count, "round \(round): \(got[0].count) frames written for \(expected[0].count) (\(context))")
            for c in expected.indices {
                let n = min(got[c].count, expected[c].count)
                let first = (0..<n).first { got[c][$0] != expected[c][$0] }
                #expect(first == nil, "round \(round), channel \(c): first differing frame \(first ?? -1) (\(context)); \(first.map { Self.origin(of: got[c], at: $0, in: expected[c]) } ?? "")")
            }
        }
    }

    /// Seeks through the file output: what is written after each is the file from the target,
    /// never the silence of the node between the restart's stop and its play (a signal that is
    /// never zero; before, three runs of 30 seeks wrote 42k to 2.1M frames of zeros).
    @Test func seeksThroughTheFileOutputWriteNoSilence() async throws {
        let a = dir.file("dc.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.4+0.1*sin(2*PI*300*t):s=44100:d=20", "-c:a", "pcm_f32le", a])
        for round in 0..<3 {
            let out = dir.file("seeks-\(round).wav")
            let q = QueuePlayer(items: [QueueItem(path: a)], output: { FileOutput(path: out) })
            defer { q.stop() }
            let seeks = try await playPerturbing(q, limit: 30) { q.seek(to: Double($0 % 5)) }
            let context = "\(seeks) seeks, \(q.underrunCount) underruns"
            let got = try readWAV(out).channels[0]
            #expect(got.count >= 44100 * 15, "round \(round): \(got.count) frames (\(context))")
            let zeros = got.count { $0 == 0 }
            #expect(zeros == 0, "round \(round): \(zeros) frames of silence written (\(context))")
        }
    }

    /// Seeks and skips through the untimed null output, whose flush waits for the render call
    /// under way to end: the hold of an untimed render is taken inside that flush, so the two
    /// never wait for each other (taken around it, a seek waited for ever on a render held for
    /// it) and the queue plays to its end.
    @Test func seeksThroughTheUntimedNullOutputFinish() async throws {
        let (paths, _) = try chirps()
        for _ in 0..<3 {
            let q = QueuePlayer(items: paths.map { QueueItem(path: $0) }, output: { NullOutput(untimed: true) })
            defer { q.stop() }
            _ = try await playPerturbing(q, limit: 30) { n in
                if n % 7 == 6 { q.advanceToNextItem() } else { q.seek(to: Double(n % 5)) }
            }
        }
    }
}
