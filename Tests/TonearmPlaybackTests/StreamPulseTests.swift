// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmNetwork
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// The streaming player heard through a real PulseAudio server (its null sink's monitor
/// recorded), fed by a real HTTP server: a dropped connection the buffer covers is not heard at
/// all; a stall longer than the buffer is one silence, after which the audio goes on where it
/// stopped — nothing lost, nothing played twice.
@Suite(.serialized) struct StreamPulseTests {
    /// The spans of `x` louder than 0.01, merging gaps shorter than 50 ms (zero crossings).
    static func loudSpans(_ x: [Float], sampleRate: Double) -> [Range<Int>] {
        let minGap = Int(0.05 * sampleRate)
        var spans: [Range<Int>] = []
        var start: Int?
        var lastLoud = -minGap - 1
        for (i, v) in x.enumerated() where abs(v) > 0.01 {
            if start == nil { start = i } else if i - lastLoud > minGap {
                spans.append(start!..<(lastLoud + 1))
                start = i
            }
            lastLoud = i
        }
        if let s = start { spans.append(s..<(lastLoud + 1)) }
        return spans
    }

    private func play(query: [String: String], file: String, dir: TempDir) async throws -> (heard: [Range<Int>], rate: Double,
                                                                                             events: [PlayerEvent]) {
        let pulse = try PrivatePulseServer()
        defer { pulse.stop() }
        let http = try PrivateHTTPServer(root: dir.path)
        defer { http.stop() }
        let rec = try pulse.startRecording(to: dir.file("heard.wav"))
        let serverString = pulse.serverString
        let player = Player(playerItem: PlayerItem(url: http.url("/\(file)", query: query)),
                            output: { PulseOutput(server: serverString, streamName: "stream") })
        let events = collectPlayerEvents(player, timeout: 40) { $0 == .didPlayToEndTime }
        player.play()
        let seen = try await events.value
        rec.stop()
        let heard = try readWAV(dir.file("heard.wav"))
        return (Self.loudSpans(heard.channels[0], sampleRate: heard.sampleRate), heard.sampleRate, seen)
    }

    @Test func aDropTheBufferCoversIsNotHeard() async throws {
        let dir = try TempDir("stream-pulse-drop")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 4)
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("a.flac"))[.size] as! Int
        // Throttled to twice real time, so that the drop comes while playing, with the buffer ahead.
        let r = try await play(query: ["drop": "\(size / 2)", "rate": "\(size / 2)"], file: "a.flac", dir: dir)
        #expect(r.events.contains { if case .newErrorLogEntry = $0 { true } else { false } }, "the drop happened")
        #expect(!r.events.contains(.playbackStalled))
        #expect(r.heard.count == 1, "one unbroken tone: \(r.heard)")
        let seconds = Double(r.heard.map(\.count).reduce(0, +)) / r.rate
        #expect(abs(seconds - 4) < 0.03, "heard \(seconds) s of a 4 s tone")
    }

    @Test func aStallIsOneSilenceAndTheAudioGoesOnWhereItStopped() async throws {
        let dir = try TempDir("stream-pulse-stall")
        defer { dir.remove() }
        try Fixtures.tone(path: dir.file("a.flac"), codecArgs: ["-c:a", "flac"], seconds: 5)
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("a.flac"))[.size] as! Int
        // Half the file (2.5 s) at once, then nothing for 4 s.
        let r = try await play(query: ["stall": "4", "at": "\(size / 2)"], file: "a.flac", dir: dir)
        #expect(r.events.filter { $0 == .playbackStalled }.count == 1)
        #expect(r.heard.count == 2, "tone, silence, tone: \(r.heard)")
        if r.heard.count == 2 {
            let gap = Double(r.heard[1].lowerBound - r.heard[0].upperBound) / r.rate
            #expect(gap > 0.3 && gap < 4, "a silence of \(gap) s while the network stalled")
        }
        let seconds = Double(r.heard.map(\.count).reduce(0, +)) / r.rate
        #expect(abs(seconds - 5) < 0.05, "heard \(seconds) s of a 5 s tone: nothing lost, nothing twice")
    }
}
