// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// Frames pulled by time as a renderer's clock moves: each is the frame ffmpeg's own decode
/// shows at that time; frames whose time passed unseen are counted, never shown late.
@Suite(.offThePool) struct VideoFrameReaderTests {
    let dir: TempDir
    init() throws { dir = try TempDir("frame-reader") }

    /// The index of the frame shown at `t`: the last that starts at or before it.
    static func shown(at t: Double, _ times: [(time: Double, key: Bool)]) -> Int? {
        times.lastIndex { $0.time <= t + 1e-9 }
    }

    @Test func pullsTheFrameShownAtEachTime() throws {
        defer { dir.remove() }
        let clip = try VideoClips.make(.init(name: "h264", ext: "mp4", args: ["-c:v", "libx264", "-bf", "3", "-g", "12"]), in: dir)
        let expected = try VideoClips.frameMD5s(clip)
        let times = try VideoClips.frameTimes(clip)
        try #require(times.count == expected.count && times.count == 30)

        // A clock slower than the frame rate (30 ms steps at 25 fps): every frame, in order, none skipped.
        let r = try VideoFrameReader(path: clip)
        var seen: [Int] = []
        for step in 0...45 {
            let t = Double(step) * 0.03
            let index = try #require(Self.shown(at: t, times))
            let isNew = try r.hasNewFrame(forTime: t)
            #expect(isNew == (seen.last != index), "at \(t)")
            let f = try #require(try r.frame(forTime: t))
            #expect(f.md5 == expected[index], "at \(t): the frame at \(f.time), ffmpeg shows frame \(index)")
            if seen.last != index { seen.append(index) }
        }
        #expect(seen == Array(0..<30))
        #expect(r.framesSkipped == 0)
        #expect(try r.hasNewFrame(forTime: 5) == false, "after the end the last frame stays")

        // Twice as fast (80 ms steps): every other frame is passed over and counted, none shown late.
        let fast = try VideoFrameReader(path: clip)
        var shown = Set<Int>()
        for step in 0...14 {
            let t = Double(step) * 0.08
            let f = try #require(try fast.frame(forTime: t))
            let index = try #require(Self.shown(at: t, times))
            #expect(f.md5 == expected[index], "at \(t)")
            shown.insert(index)
        }
        #expect(fast.framesSkipped == (0...shown.max()!).count - shown.count, "\(fast.framesSkipped) skipped, shown \(shown.sorted())")
        #expect(fast.framesSkipped > 10)

        // Back, and far ahead (past the seek threshold): seeks, and still the frame shown then.
        fast.seekThreshold = 0.2
        for t in [0.3, 0.05, 1.0, 0.62, 0.66] {
            let f = try #require(try fast.frame(forTime: t))
            #expect(f.md5 == expected[try #require(Self.shown(at: t, times))], "after a jump to \(t)")
        }
        #expect(fast.warnings.isEmpty, "\(fast.warnings)")
    }
}
