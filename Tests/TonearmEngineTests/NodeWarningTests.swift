// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
@testable import TonearmEngine
import TonearmTestSupport

/// What reading a scheduled segment meets reaches the scheduler (a queue says it to the user):
/// the source's warnings, and a read that throws — which ends the segment there — as
/// ``AudioWarning/readFailed(path:framePosition:reason:)``. Offline rendering, no threads of the
/// test's own.
@Suite struct NodeWarningTests {
    /// A ramp that reports one corrupt packet per read after `corruptFrom`, and throws once
    /// `failAt` frames have been read.
    final class DamagedSource: PlaybackSource, @unchecked Sendable {
        let ramp: RampSource
        let failAt: AudioFramePosition
        let corruptFrom: AudioFramePosition
        private var position: AudioFramePosition = 0
        private var met: [AudioWarning] = []
        var sourceFormat: AudioFormat { ramp.sourceFormat }
        var frameLength: AudioFramePosition { ramp.frameLength }

        init(frames: AudioFramePosition, failAt: AudioFramePosition, corruptFrom: AudioFramePosition) {
            ramp = RampSource(frames: frames)
            self.failAt = failAt
            self.corruptFrom = corruptFrom
        }

        func seek(toFrame frame: AudioFramePosition) throws {
            try ramp.seek(toFrame: frame)
            position = frame
        }

        func readInterleaved(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws -> Int {
            if position >= failAt { throw TonearmError.decodeFailed(path: "/damaged.mp3", detail: "the disk went away") }
            let n = try ramp.readInterleaved(into: buffer, frameCount: Int(min(AudioFramePosition(frameCount), failAt - position)))
            if position >= corruptFrom {
                met.append(.corruptPacket(path: "/damaged.mp3", packetIndex: Int(position / 1152),
                                          framePosition: position, detail: "bad"))
            }
            position += AudioFramePosition(n)
            return n
        }

        func takeWarnings() -> [AudioWarning] {
            defer { met = [] }
            return met
        }
    }

    @Test func warningsAndAFailedReadReachTheScheduler() throws {
        let e = AudioEngine()
        try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: 48000, channels: 2), maximumFrameCount: 1024)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        let source = DamagedSource(frames: 48000, failAt: 30000, corruptFrom: 20000)
        let got = Mutex<[AudioWarning]>([])
        try p.scheduleSegment(source, startingFrame: 0, frameCount: 48000, gain: 1, consumed: nil, rendered: nil,
                              warnings: { met in got.withLock { $0 += met } })
        p.play()
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 1000)!
        var heard: [Float] = []
        for _ in 0..<48 {
            #expect(try e.renderOffline(1000, to: buf) == .success)
            heard += buf.channel(0)
        }
        let warnings = got.withLock { $0 }
        let corrupt = warnings.filter { if case .corruptPacket = $0 { true } else { false } }
        #expect(!corrupt.isEmpty)
        #expect(corrupt.allSatisfy { if case .corruptPacket(_, _, let f, _) = $0 { f >= 20000 && f < 30000 } else { false } })
        let failed = warnings.compactMap { w -> (AudioFramePosition, String)? in
            if case .readFailed(_, let f, let r) = w { (f, r) } else { nil }
        }
        #expect(failed.count == 1)
        #expect(failed.first?.0 == 30000)
        #expect(failed.first?.1.contains("the disk went away") == true)
        // What was read before the failure played; after it, silence (the segment ended there).
        #expect(heard[29999] == RampSource.value(frame: 29999, channel: 0))
        #expect(heard[30000...].allSatisfy { $0 == 0 })
    }
}
