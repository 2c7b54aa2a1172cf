// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// System sounds on a real PulseAudio server: overlapping plays all reach the sink, the stream
/// carries the `event` role, and bad files are clear errors.
@Suite(.serialized) struct SystemSoundTests {
    final class Done: Sendable {
        let count = Mutex(0)
        let signal = DispatchSemaphore(value: 0)
        func hit() { count.withLock { $0 += 1 }; signal.signal() }
    }

    @Test func overlappingSoundsAllReachTheSinkWithTheEventRole() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("system-sound")
        defer { dir.remove() }
        let freqs = [440.0, 660.0, 990.0]
        let paths = try freqs.map { f -> String in
            let p = dir.file("s\(Int(f)).wav")
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.2*sin(2*PI*\(f)*t)|0.2*sin(2*PI*\(f)*t):s=48000:d=0.4", p])
            return p
        }
        let serverString = server.serverString
        let sounds = try paths.map { p in
            try SystemSound(contentsOf: URL(fileURLWithPath: p), output: {
                PulseOutput(server: serverString, streamName: "System sound", role: "event", targetLatency: 0.02)
            })
        }
        let inputs = try server.pactl("list", "sink-inputs").stdout
        #expect(inputs.components(separatedBy: "media.role = \"event\"").count - 1 == 3, "\(inputs)")
        let rec = try server.startRecording(to: dir.file("heard.wav"))
        let done = Done()
        for s in sounds { s.play { done.hit() } }
        // Three completions, each within a bounded wait.
        for _ in 0..<3 { #expect(done.signal.wait(timeout: .now() + 5) == .success) }
        #expect(done.count.withLock { $0 } == 3)
        rec.stop()
        let heard = try readWAV(dir.file("heard.wav"))
        let mono = heard.channels[0]
        let span = try #require(nonSilentSpan(mono, sampleRate: heard.sampleRate))
        let middle = Array(mono[(span.lowerBound + 2400)..<(span.lowerBound + 12_000)])
        for f in freqs {
            let p = goertzelPower(middle[...], frequency: f, sampleRate: heard.sampleRate)
            let off = goertzelPower(middle[...], frequency: f * 1.37, sampleRate: heard.sampleRate)
            #expect(p > 100 * off, "\(f) Hz missing from the overlap (\(p) vs \(off))")
        }
    }

    /// The sound server goes away while a sound plays: the play's completion runs all the same
    /// (nothing waits for an end that cannot come — a ported `AudioServicesPlaySystemSoundWithCompletion`
    /// caller would hang), and a play while there is no server completes at once, unheard.
    @Test func aLostServerEndsThePlayAndAPlayWithoutOneCompletesToo() async throws {
        let server = try PrivatePulseServer()
        let dir = try TempDir("system-sound-lost")
        defer { dir.remove() }
        let path = dir.file("long.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_s16le"], seconds: 20)
        let serverString = server.serverString
        let sound = try SystemSound(contentsOf: URL(fileURLWithPath: path), output: {
            PulseOutput(server: serverString, streamName: "System sound", role: "event", targetLatency: 0.02)
        })
        let done = Done()
        sound.play { done.hit() }
        server.stop()
        // Well before the 20 s sound could have been heard to its end.
        #expect(try await offThePool { done.signal.wait(timeout: .now() + 10) } == .success, "the cut-off play's completion")
        sound.play { done.hit() }
        #expect(try await offThePool { done.signal.wait(timeout: .now() + 10) } == .success, "a play with no server completes")
        #expect(done.count.withLock { $0 } == 2)
    }

    @Test func tooLongAndMissingFilesAreClearErrors() throws {
        let dir = try TempDir("system-sound-bad")
        defer { dir.remove() }
        let long = dir.file("long.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=31", long])
        #expect {
            try SystemSound(contentsOf: URL(fileURLWithPath: long), output: { NullOutput() })
        } throws: { "\($0)".contains("at most 30 s") && "\($0)".contains("long.flac") }
        #expect {
            try SystemSound(contentsOf: URL(fileURLWithPath: dir.file("none.wav")), output: { NullOutput() })
        } throws: { "\($0)".contains("file not found") }
    }
}
