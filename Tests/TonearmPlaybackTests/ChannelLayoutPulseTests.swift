// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// A 5.1 FLAC through `AudioPlayer` and a private PulseAudio server: each channel carries its own
/// tone, and each tone must arrive where its speaker is — on a 5.1 sink (whose channels are in
/// another order than the file's, so only placing by name passes) and downmixed on a stereo sink.
@Suite(.serialized) struct ChannelLayoutPulseTests {
    /// The file's channels in FFmpeg's 5.1 order, PulseAudio's name for each, and its tone.
    static let channels: [(pulse: String, frequency: Double)] = [
        ("front-left", 300), ("front-right", 500), ("front-center", 700),
        ("lfe", 900), ("rear-left", 1100), ("rear-right", 1300),
    ]
    static let amplitude = 0.3

    /// A 1.5 s 5.1 FLAC at 48 kHz, one tone per channel.
    static func surroundFile(in dir: TempDir) throws -> String {
        try toneFile(dir.file("surround.flac"), layout: "5.1", frequencies: channels.map(\.frequency), codec: "flac")
    }

    /// A 1.5 s file at 48 kHz in FFmpeg's layout `layout`, channel `c` a tone at `frequencies[c]`.
    static func toneFile(_ path: String, layout: String, frequencies: [Double], codec: String) throws -> String {
        let exprs = frequencies.map { "\(amplitude)*sin(2*PI*\($0)*t)" }.joined(separator: "|")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(exprs):c=\(layout):s=48000:d=1.5", "-c:a", codec, path])
        return path
    }

    /// Checks that on each channel of `heard` (named by `sinkMap`) the tone of the file's channel
    /// of that name is at full level and every other tone is absent — except on the `upmixed`
    /// channels, which the file has none for and PulseAudio may fill from their neighbours
    /// (`remixing-use-all-sink-channels`): there, every tone is well below full level.
    static func expectEachToneOnItsChannel(_ heard: [ArraySlice<Float>], sinkMap: String,
                                           tones: [(pulse: String, frequency: Double)],
                                           upmixed: Set<String> = []) throws {
        let names = sinkMap.split(separator: ",").map(String.init)
        try #require(heard.count == names.count)
        for (c, name) in names.enumerated() {
            for tone in tones {
                let a = amplitude(of: tone.frequency, in: heard[c])
                if tone.pulse == name {
                    #expect(abs(a - amplitude) < 0.03, "\(name): its own tone \(tone.frequency) Hz at \(a)")
                } else if upmixed.contains(name) {
                    #expect(a < 0.6 * amplitude, "\(name): the \(tone.pulse) tone \(tone.frequency) Hz at \(a)")
                } else {
                    #expect(a < 0.01, "\(name): the \(tone.pulse) tone \(tone.frequency) Hz at \(a)")
                }
            }
        }
    }

    /// The driver the player made, kept to read its underrun count afterwards.
    final class DriverBox: Sendable {
        let driver = Mutex<PulseOutput?>(nil)
    }

    /// Plays `file` to the end through `sink` while recording its monitor (`channelMap` channels,
    /// or stereo), and returns the middle of what was heard, channel by channel. A take the
    /// machine starved (PulseAudio reported an underrun: a hole in the recording, not a wrong
    /// placement) is taken again (``firstUnstarvedTake``).
    static func playAndRecord(_ file: String, server: PrivatePulseServer, sink: String,
                              channelMap: String?, dir: TempDir) async throws -> [ArraySlice<Float>] {
        let (heard, underruns) = try await firstUnstarvedTake("\(sink)") { attempt in
            let rec = try server.startRecording(ofSink: sink, to: dir.file("heard-\(sink)-\(attempt).wav"), channelMap: channelMap)
            let serverString = server.serverString
            let box = DriverBox()
            let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: file), output: {
                let d = PulseOutput(server: serverString, streamName: "surround", device: sink)
                box.driver.withLock { $0 = d }
                return d
            })
            let events = player.events
            guard player.play() else { throw TestSupportError("play() refused") }
            _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
            rec.stop()
            return (try readWAV(rec.path), box.driver.withLock { $0?.underrunCount } ?? -1)
        }
        let take = try #require(heard, "PulseAudio reported underruns in every take (\(underruns)): the recordings have holes")
        let span = try #require(nonSilentSpan(take.mono, sampleRate: take.sampleRate, threshold: 0.005))
        let middle = (span.lowerBound + 9_600)..<(span.upperBound - 9_600)
        try #require(middle.count > 24_000, "heard only \(span.count) frames")
        return take.channels.map { $0[middle] }
    }

    /// The amplitude of `frequency` in `samples`.
    static func amplitude(of frequency: Double, in samples: ArraySlice<Float>) -> Double {
        2 * goertzelPower(samples, frequency: frequency, sampleRate: 48_000).squareRoot()
    }

    @Test func eachChannelReachesItsSpeakerOnAFivePointOneSink() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("surround-51")
        defer { dir.remove() }
        let file = try Self.surroundFile(in: dir)
        // The sink's channels in ALSA's order (rears before centre and LFE): not the file's.
        let sinkMap = "front-left,front-right,rear-left,rear-right,front-center,lfe"
        try server.pactl("load-module", "module-null-sink", "sink_name=surround", "format=float32le", "rate=48000",
                         "channels=6", "channel_map=\(sinkMap)")
        let heard = try await Self.playAndRecord(file, server: server, sink: "surround", channelMap: sinkMap, dir: dir)
        try Self.expectEachToneOnItsChannel(heard, sinkMap: sinkMap, tones: Self.channels)
    }

    /// 5.1(side) is not FFmpeg's default for six channels: only a layout carried from the file
    /// through the engine to the output puts the surround tones on the side speakers of a 7.1
    /// sink (which has rear speakers too) rather than on the rear ones.
    @Test func sideChannelsReachTheSideSpeakersNotTheRearOnes() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("surround-side")
        defer { dir.remove() }
        let tones: [(pulse: String, frequency: Double)] = [
            ("front-left", 300), ("front-right", 500), ("front-center", 700),
            ("lfe", 900), ("side-left", 1100), ("side-right", 1300),
        ]
        let file = try Self.toneFile(dir.file("side.wav"), layout: "5.1(side)", frequencies: tones.map(\.frequency),
                                     codec: "pcm_s16le")
        let sinkMap = "front-left,front-right,side-left,side-right,rear-left,rear-right,front-center,lfe"
        try server.pactl("load-module", "module-null-sink", "sink_name=surround71", "format=float32le", "rate=48000",
                         "channels=8", "channel_map=\(sinkMap)")
        let heard = try await Self.playAndRecord(file, server: server, sink: "surround71", channelMap: sinkMap, dir: dir)
        try Self.expectEachToneOnItsChannel(heard, sinkMap: sinkMap, tones: tones, upmixed: ["rear-left", "rear-right"])
    }

    @Test func aStereoSinkGetsFrontRightAtItsLevelAndNoFullLFE() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("surround-stereo")
        defer { dir.remove() }
        let file = try Self.surroundFile(in: dir)
        let heard = try await Self.playAndRecord(file, server: server, sink: server.sinkName, channelMap: nil, dir: dir)
        try #require(heard.count == 2)
        let (left, right) = (heard[0], heard[1])
        let tone = Dictionary(uniqueKeysWithValues: Self.channels.map { ($0.pulse, $0.frequency) })
        let frontLeftOnLeft = Self.amplitude(of: tone["front-left"]!, in: left)
        let frontRightOnRight = Self.amplitude(of: tone["front-right"]!, in: right)
        // Downmixed, the front pair keeps its balance: front-right on the right as loud as
        // front-left on the left, and neither on the other side.
        #expect(frontLeftOnLeft > 0.05, "front-left on the left at \(frontLeftOnLeft)")
        #expect(abs(frontRightOnRight / frontLeftOnLeft - 1) < 0.1,
                "front-right on the right at \(frontRightOnRight), front-left on the left at \(frontLeftOnLeft)")
        #expect(Self.amplitude(of: tone["front-right"]!, in: left) < 0.1 * frontRightOnRight)
        #expect(Self.amplitude(of: tone["front-left"]!, in: right) < 0.1 * frontLeftOnLeft)
        // The rears go to their own side; the centre to both alike.
        #expect(Self.amplitude(of: tone["rear-right"]!, in: left) < 0.1 * Self.amplitude(of: tone["rear-right"]!, in: right))
        #expect(Self.amplitude(of: tone["rear-left"]!, in: right) < 0.1 * Self.amplitude(of: tone["rear-left"]!, in: left))
        let centreLeft = Self.amplitude(of: tone["front-center"]!, in: left)
        let centreRight = Self.amplitude(of: tone["front-center"]!, in: right)
        #expect(centreLeft > 0.02 && abs(centreRight / centreLeft - 1) < 0.1, "centre \(centreLeft) / \(centreRight)")
        // The LFE is not a full-level right channel (PulseAudio mixes it in at most lowered).
        let lfeRight = Self.amplitude(of: tone["lfe"]!, in: right)
        #expect(lfeRight < 0.5 * frontRightOnRight, "LFE on the right at \(lfeRight)")
    }
}
