// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A queue moving between two files of different channel layouts, through a private PulseAudio
/// server: the queue's engine and its stream keep the first file's layout (that is what keeps
/// the join gapless), so the second file's channels must be put onto it by position, not copied
/// by index. Each channel of each file carries its own tone, found where its speaker is.
@Suite(.serialized) struct QueueLayoutPulseTests {
    typealias Tone = (pulse: String, frequency: Double)
    static let amplitude = ChannelLayoutPulseTests.amplitude
    static let seconds = 1.5

    /// Plays `files` as one queue through `sink` while recording its monitor (`sinkMap`), and
    /// returns the middle of each file's part of the recording, channel by channel.
    static func playQueueAndRecord(_ files: [String], server: PrivatePulseServer, sink: String, sinkMap: String,
                                   dir: TempDir) async throws -> [[ArraySlice<Float>]] {
        let rec = try server.startRecording(ofSink: sink, to: dir.file("heard-\(sink).wav"), channelMap: sinkMap)
        let serverString = server.serverString
        let q = QueuePlayer(items: files.map { QueueItem(path: $0) },
                            output: { PulseOutput(server: serverString, streamName: "layouts", device: sink) })
        defer { q.stop() }
        let collector = eventsUntilFinished(q.events)
        q.play()
        let seen = try await finished(collector, timeout: seconds * Double(files.count) + 20)
        rec.stop()
        #expect(!seen.contains { if case .itemFailed = $0 { true } else { false } }, "\(seen)")
        let heard = try readWAV(rec.path)
        let span = try #require(nonSilentSpan(heard.mono, sampleRate: heard.sampleRate, threshold: 0.005))
        let perFile = Int(seconds * heard.sampleRate)
        // Each file's part, 0.2 s in from both ends (the join, and the monitor's lost start).
        let margin = 9_600
        return (0..<files.count).map { i in
            let end = i == files.count - 1 ? span.upperBound : span.upperBound - (files.count - 1 - i) * perFile
            let start = end - perFile
            return heard.channels.map { $0[(start + margin)..<(end - margin)] }
        }
    }

    /// The amplitude of each tone on the sink channel `name` of `part`.
    static func level(_ tone: Double, on name: String, in part: [ArraySlice<Float>], sinkMap: String) -> Double {
        let c = sinkMap.split(separator: ",").firstIndex { $0 == name }!
        return ChannelLayoutPulseTests.amplitude(of: tone, in: part[c])
    }

    /// 7.1, then 5.1(side): the side tones of the second file reach the side speakers (copied
    /// by index they went to the rear ones, and the sides were silent).
    @Test func fivePointOneSideAfterSevenPointOneKeepsItsSides() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("queue-layout-71")
        defer { dir.remove() }
        let first: [Tone] = [("front-left", 300), ("front-right", 500), ("front-center", 700), ("lfe", 900),
                             ("rear-left", 1100), ("rear-right", 1300), ("side-left", 1500), ("side-right", 1700)]
        let second: [Tone] = [("front-left", 400), ("front-right", 600), ("front-center", 800), ("lfe", 1000),
                              ("side-left", 1200), ("side-right", 1400)]
        let a = try ChannelLayoutPulseTests.toneFile(dir.file("a.flac"), layout: "7.1", frequencies: first.map(\.frequency),
                                                     codec: "flac")
        let b = try ChannelLayoutPulseTests.toneFile(dir.file("b.flac"), layout: "5.1(side)",
                                                     frequencies: second.map(\.frequency), codec: "flac")
        let sinkMap = "front-left,front-right,side-left,side-right,rear-left,rear-right,front-center,lfe"
        try server.pactl("load-module", "module-null-sink", "sink_name=surround71", "format=float32le", "rate=48000",
                         "channels=8", "channel_map=\(sinkMap)")
        let parts = try await Self.playQueueAndRecord([a, b], server: server, sink: "surround71", sinkMap: sinkMap, dir: dir)
        try ChannelLayoutPulseTests.expectEachToneOnItsChannel(parts[0], sinkMap: sinkMap, tones: first)
        // The second file has no rear channels: its tones are on their own speakers, the rears silent.
        try ChannelLayoutPulseTests.expectEachToneOnItsChannel(parts[1], sinkMap: sinkMap, tones: second)
    }

    /// quad, then 4.0 (front centre and rear centre in the places of quad's rear pair): the
    /// centre is heard on the front pair and the rear centre on the rear pair, each at −3 dB
    /// per side (copied by index, the centre played on the rear-left speaker and the rear centre
    /// on the rear-right one).
    @Test func fourPointZeroAfterQuadPutsItsCentresBetweenTheirPairs() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("queue-layout-quad")
        defer { dir.remove() }
        let quad: [Tone] = [("front-left", 300), ("front-right", 500), ("rear-left", 700), ("rear-right", 900)]
        let a = try ChannelLayoutPulseTests.toneFile(dir.file("a.wav"), layout: "quad", frequencies: quad.map(\.frequency),
                                                     codec: "pcm_s16le")
        let (fl, fr, fc, bc) = (400.0, 600.0, 800.0, 1000.0)
        let b = try ChannelLayoutPulseTests.toneFile(dir.file("b.wav"), layout: "4.0", frequencies: [fl, fr, fc, bc],
                                                     codec: "pcm_s16le")
        let sinkMap = "front-left,front-right,rear-left,rear-right"
        try server.pactl("load-module", "module-null-sink", "sink_name=quad", "format=float32le", "rate=48000",
                         "channels=4", "channel_map=\(sinkMap)")
        let parts = try await Self.playQueueAndRecord([a, b], server: server, sink: "quad", sinkMap: sinkMap, dir: dir)
        try ChannelLayoutPulseTests.expectEachToneOnItsChannel(parts[0], sinkMap: sinkMap, tones: quad)

        let part = parts[1]
        func at(_ tone: Double, _ speaker: String) -> Double { Self.level(tone, on: speaker, in: part, sinkMap: sinkMap) }
        let half = Self.amplitude * 0.5.squareRoot()
        #expect(abs(at(fl, "front-left") - Self.amplitude) < 0.03, "front-left at \(at(fl, "front-left"))")
        #expect(abs(at(fr, "front-right") - Self.amplitude) < 0.03, "front-right at \(at(fr, "front-right"))")
        for speaker in ["front-left", "front-right"] {
            #expect(abs(at(fc, speaker) - half) < 0.03, "the centre on \(speaker) at \(at(fc, speaker))")
            #expect(at(bc, speaker) < 0.01, "the rear centre on \(speaker) at \(at(bc, speaker))")
        }
        for speaker in ["rear-left", "rear-right"] {
            #expect(abs(at(bc, speaker) - half) < 0.03, "the rear centre on \(speaker) at \(at(bc, speaker))")
            #expect(at(fc, speaker) < 0.01, "the centre on \(speaker) at \(at(fc, speaker))")
            #expect(at(fl, speaker) < 0.01 && at(fr, speaker) < 0.01, "a front tone on \(speaker)")
        }
        #expect(at(fl, "front-right") < 0.01 && at(fr, "front-left") < 0.01)
    }
}
