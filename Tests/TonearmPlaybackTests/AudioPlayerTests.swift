// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCodecs
import TonearmCore
import TonearmEngine
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// `AudioPlayer` end to end through real outputs: the file output (exact samples) and a private
/// PulseAudio server (what is heard, interruptions).
@Suite(.serialized)  final class AudioPlayerTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("player") }
    deinit { dir.remove() }

    func decodeAll(_ path: String) throws -> [[Float]] {
        let f = try AudioFile(path: path)
        let buf = AudioPCMBuffer(format: f.processingFormat, frameCapacity: Int(f.length))!
        try f.read(into: buf)
        return buf.channelArrays()
    }

    /// Plays `player` to its end and returns its events.
    func playToEnd(_ player: AudioPlayer) async throws -> [AudioPlayerEvent] {
        let events = player.events
        #expect(player.play())
        var seen: [AudioPlayerEvent] = []
        _ = try await waitForEvent(events, "didFinishPlaying") { e in
            if case .didFinishPlaying = e { return true }
            return false
        }
        seen.append(.didFinishPlaying(successfully: true))
        return seen
    }

    @Test func playsAFileToTheFileOutputSampleForSample() async throws {
        let src = dir.file("tone.flac")
        try Fixtures.tone(path: src, codecArgs: ["-c:a", "flac"], seconds: 1.5, rate: 44100)
        let out = dir.file("out.wav")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { FileOutput(path: out) })
        #expect(player.duration == 1.5)
        let events = player.events
        #expect(player.play())
        let e = try await waitForEvent(events) { if case .didFinishPlaying = $0 { true } else { false } }
        #expect(e == .didFinishPlaying(successfully: true))
        #expect(!player.isPlaying)
        #expect(player.currentTime == 0)
        let wav = try readWAV(out)
        #expect(wav.sampleRate == 44100)
        #expect(wav.channels == (try decodeAll(src)))
    }

    @Test func loopsRepeatSeamlessly() async throws {
        let src = dir.file("loop.wav")
        try Fixtures.tone(path: src, codecArgs: ["-c:a", "pcm_f32le"], seconds: 0.3, rate: 48000, channels: 1, freq: 1000)
        let out = dir.file("loops.wav")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { FileOutput(path: out) })
        player.numberOfLoops = 2
        let events = player.events
        player.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let one = try decodeAll(src)[0]
        #expect(try readWAV(out).channels[0] == one + one + one)
    }

    @Test func seekBeforePlayStartsAtTheExactFrame() async throws {
        let src = dir.file("seek.mp3")
        try Fixtures.tone(path: src, codecArgs: ["-c:a", "libmp3lame", "-b:a", "128k"], seconds: 2, rate: 48000)
        let out = dir.file("seek.wav")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { FileOutput(path: out) })
        player.currentTime = 0.75
        #expect(player.currentFrame == 36000)
        let events = player.events
        player.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let all = try decodeAll(src)
        let wav = try readWAV(out)
        #expect(wav.channels == all.map { Array($0[36000...]) })
    }

    @Test func stopKeepsTheTimeAndPlayResumesFromIt() async throws {
        let src = dir.file("gen.wav")
        try Fixtures.tone(path: src, codecArgs: ["-c:a", "pcm_s16le"], seconds: 1, rate: 48000)
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { NullOutput(untimed: false) })
        player.currentTime = 0.5
        #expect(player.prepareToPlay())
        player.stop()
        #expect(abs(player.currentTime - 0.5) < 1e-9)
    }

    @Test func aTemporaryPlayerKeepsItselfAliveUntilItFinishes() async throws {
        let out = dir.file("temp.wav")
        weak var weakPlayer: AudioPlayer?
        let events: AsyncStream<AudioPlayerEvent>
        do {
            let p = AudioPlayer(source: RampSource(frames: 48000), output: { FileOutput(path: out) })
            events = p.events
            weakPlayer = p
            p.play()
        }
        // Nobody holds the player now, yet it plays to the end: the events stream delivers the
        // finish and then ends, which happens only when the player is released.
        let all = try await collectUntilFinished(events)
        #expect(all.contains(.didFinishPlaying(successfully: true)))
        #expect(weakPlayer == nil)
        #expect(try readWAV(out).frameCount == 48000)
    }

    @Test func volumeAndPanShapeTheOutput() async throws {
        let out = dir.file("vol.wav")
        let p = AudioPlayer(source: RampSource(frames: 20000), output: { FileOutput(path: out) })
        p.volume = 0.5
        p.pan = -1
        let events = p.events
        p.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let wav = try readWAV(out)
        // After the 5 ms anti-click ramp the gain is exactly 0.5 on the left, 0 on the right.
        for f in stride(from: 1000, to: 20000, by: 997) {
            #expect(wav.channels[0][f] == RampSource.value(frame: Int64(f), channel: 0) * 0.5)
            #expect(wav.channels[1][f] == 0)
        }
    }

    @Test func badFilesThrowTypedErrors() throws {
        #expect(throws: TonearmError.fileNotFound(path: dir.file("missing.flac"))) {
            try AudioPlayer(contentsOf: URL(fileURLWithPath: dir.file("missing.flac")), output: { NullOutput() })
        }
        let text = dir.file("notes.mp3")
        try "just some text\n".write(toFile: text, atomically: true, encoding: .utf8)
        do {
            _ = try AudioPlayer(contentsOf: URL(fileURLWithPath: text), output: { NullOutput() })
            Issue.record("a text file was accepted")
        } catch let e as TonearmError {
            #expect(e.path == text)
        }
    }

    @Test func anUnopenableOutputMakesPlayReturnFalseWithAnError() async throws {
        let p = AudioPlayer(source: RampSource(frames: 1000), output: { FileOutput(path: "/nonexistent-dir/x.wav") })
        let events = p.events
        #expect(!p.play())
        let e = try await waitForEvent(events) { if case .decodeErrorDidOccur = $0 { true } else { false } }
        #expect("\(e)".contains("/nonexistent-dir/x.wav"))
        #expect(!p.isPlaying)
    }

    @Test(arguments: [2.0, 0.5])
    func rateChangesSpeedButKeepsPitch(rate: Double) async throws {
        let src = dir.file("rate.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.5*sin(2*PI*440*t):s=48000:d=2", "-c:a", "pcm_f32le", src])
        let out = dir.file("rate-\(rate).wav")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { FileOutput(path: out) })
        player.enableRate = true
        player.rate = Float(rate)
        let events = player.events
        player.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let wav = try readWAV(out)
        let expected = 2.0 / rate
        #expect(abs(wav.duration - expected) < 0.001, "rendered \(wav.duration) s, expected \(expected) s")
        let body = Array(wav.channels[0][Int(0.2 * 48000)..<Int((expected - 0.2) * 48000)])
        let f = try #require(dominantFrequency(body, sampleRate: 48000))
        #expect(abs(f - 440) < 3, "pitch moved to \(f) Hz")
        #expect(abs(Double(rms(body)) - 0.5 / 2.0.squareRoot()) < 0.05)
    }

    @Test func rateIsIgnoredUnlessEnabled() {
        let p = AudioPlayer(source: RampSource(frames: 1000), output: { NullOutput() })
        p.rate = 1.5
        #expect(p.rate == 1.5)
        p.rate = 9
        #expect(p.rate == 2)   // clamped to AVAudioPlayer's range
    }

    @Test func playAtTimeStartsAfterTheGivenDelay() async throws {
        let out = dir.file("attime.wav")
        let p = AudioPlayer(source: RampSource(frames: 4800), output: { FileOutput(path: out) })
        let events = p.events
        #expect(p.play(atTime: p.deviceCurrentTime + 0.5))
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let w = try readWAV(out)
        let silent = w.channels[1].prefix { $0 == 0 }.count
        #expect(abs(silent - 24000) < 480, "started after \(silent) frames")
        #expect(w.frameCount == silent + 4800)
    }

    @Test func fadeRampsTheGainSmoothly() async throws {
        let out = dir.file("fade.wav")
        let p = AudioPlayer(source: RampSource(frames: 48000, channels: 1), output: { FileOutput(path: out) })
        p.volume = 0
        #expect(p.prepareToPlay())
        p.setVolume(1, fadeDuration: 0.5)
        let events = p.events
        p.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let w = try readWAV(out).channels[0]
        for f in [6000, 12000, 18000] {
            let gain = w[f] / RampSource.value(frame: Int64(f), channel: 0)
            #expect(abs(gain - Float(f) / 24000) < 0.001, "gain \(gain) at frame \(f)")
        }
        #expect(w[30000] == RampSource.value(frame: 30000, channel: 0))
    }

    @Test func seekingWhilePlayingMovesAtOnceAndPauseHoldsThePosition() async throws {
        let p = AudioPlayer(source: RampSource(frames: 48000 * 30), output: { NullOutput() })
        #expect(p.play())
        p.currentTime = 20
        let t = p.currentTime
        #expect(t >= 20 && t < 20.5, "currentTime \(t) after seeking to 20")
        p.pause()
        #expect(!p.isPlaying)
        let paused = p.currentTime
        #expect(paused >= 20 && paused < 20.5)
        #expect(p.currentTime == paused)
        p.currentTime = 3
        #expect(p.currentTime == 3)
        #expect(p.play())
        #expect(p.currentTime >= 3)
        p.stop()
        #expect(!p.isPlaying)
    }

    @Test func playsFromMemory() async throws {
        let src = dir.file("mem.ogg")
        try Fixtures.tone(path: src, codecArgs: ["-c:a", "libvorbis"], seconds: 1, rate: 48000)
        let out = dir.file("mem.wav")
        let p = try AudioPlayer(data: try Data(contentsOf: URL(fileURLWithPath: src)), output: { FileOutput(path: out) })
        #expect(p.url == nil && p.data != nil)
        let events = p.events
        p.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        #expect(try readWAV(out).channels == (try decodeAll(src)))
    }

    final class Recorder: AudioPlayerDelegate, @unchecked Sendable {
        let lock = NSLock()
        var finished: [Bool] = []
        func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
            lock.lock(); finished.append(flag); lock.unlock()
        }
    }

    @Test func theDelegateHearsTheFinish() async throws {
        let rec = Recorder()
        let p = AudioPlayer(source: RampSource(frames: 2000), output: { [dir] in FileOutput(path: dir.file("d.wav")) })
        p.delegate = rec
        let events = p.events
        p.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        // Delegate calls happen before the stream sees the event (same thread, in order).
        #expect(rec.lock.withLock { rec.finished } == [true])
    }

    /// Issue 23: a delegate written with iOS's signatures (`error: (any Error)?`,
    /// `withOptions flags: Int`) is called — before, those methods compiled and were never called.
    final class IOSDelegate: AudioPlayerDelegate, @unchecked Sendable {
        let lock = NSLock()
        var seen: [String] = []
        func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: Error?) {
            lock.withLock { seen.append("decode error: \(error.map { "\($0)" } ?? "nil")") }
        }
        func audioPlayerEndInterruption(_ player: AudioPlayer, withOptions flags: Int) {
            lock.withLock { seen.append("end interruption \(flags)") }
        }
    }

    @Test func aDelegateWithTheIOSSignaturesIsCalled() async throws {
        let ios = IOSDelegate()
        let p = AudioPlayer(source: RampSource(frames: 1000), output: { FileOutput(path: "/nonexistent-dir/x.wav") })
        p.delegate = ios
        let events = p.events
        #expect(!p.play())
        _ = try await waitForEvent(events) { if case .decodeErrorDidOccur = $0 { true } else { false } }
        // Delegate calls happen before the stream sees the event (same thread, in order).
        let seen = ios.lock.withLock { ios.seen }
        #expect(seen.count == 1 && seen[0].hasPrefix("decode error: ") && seen[0].contains("/nonexistent-dir/x.wav"), "\(seen)")
        // The interruption's end reaches the iOS form with AVAudioSession's flag value, through
        // the Tonearm form the player calls.
        ios.audioPlayerEndInterruption(p, shouldResume: true)
        ios.audioPlayerEndInterruption(p, shouldResume: false)
        #expect(ios.lock.withLock { ios.seen }.suffix(2) == ["end interruption 1", "end interruption 0"])
    }

    @Test func thePlayersEqualizerShapesWhatIsPlayed() async throws {
        let src = dir.file("eq.wav")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=0.25*sin(2*PI*1000*t):s=48000:d=1", "-c:a", "pcm_f32le", src])
        let out = dir.file("eq-out.wav")
        let player = try AudioPlayer(contentsOf: URL(fileURLWithPath: src), output: { FileOutput(path: out) })
        player.eq.bands[5].gain = -6        // the 1 kHz band of the graphic EQ
        let events = player.events
        player.play()
        _ = try await waitForEvent(events) { $0 == .didFinishPlaying(successfully: true) }
        let w = try readWAV(out)
        #expect(w.frameCount == 48000)
        let db = 20 * log10(Double(rms(w.channels[0][4800..<43200])) / (0.25 / 2.0.squareRoot()))
        #expect(abs(db + 6) < 0.15, "measured \(db) dB")
    }

    @Test func meteringReportsTheLevelInDecibels() {
        #expect(abs(AudioPlayer.decibels(amplitude: 0.5) + 6.0206) < 1e-3)
        #expect(AudioPlayer.decibels(power: 0) == -160)
        #expect(abs(AudioPlayer.decibels(power: 0.125) - Float(10 * log10(0.125))) < 1e-5)
    }
}

/// A real-time null output whose `open` waits until the test lets it go: an output that takes
/// its time to open (a slow server, a network sink).
final class SlowOpeningOutput: AudioOutputDriver, @unchecked Sendable {
    private let inner = NullOutput()
    let entered = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    var name: String { "slow" }
    var format: AudioFormat { inner.format }
    var isAudible: Bool { false }
    var events: AsyncStream<AudioOutputEvent> { inner.events }
    func open(format: AudioFormat) throws {
        entered.signal()
        gate.wait()
        try inner.open(format: format)
    }
    func start(source: any AudioRenderSource) throws { try inner.start(source: source) }
    func pause() { inner.pause() }
    func resume() { inner.resume() }
    func stop() { inner.stop() }
    func close() { inner.close() }
    func setVolume(_ volume: Float) {}
    var latency: Double { inner.latency }
    var framesPlayed: Int64 { inner.framesPlayed }
    var underrunCount: Int { 0 }
}

/// The player's lock is never held while its output opens.
@Suite struct AudioPlayerOpeningTests {
    @Test func thePlayerAnswersWhileItsOutputOpens() throws {
        let out = SlowOpeningOutput()
        let player = AudioPlayer(source: RampSource(frames: 48_000), output: { out })
        let played = DispatchSemaphore(value: 0)
        Thread {
            _ = player.play()
            played.signal()
        }.start()
        #expect(out.entered.wait(timeout: .now() + 10) == .success)
        let answered = DispatchSemaphore(value: 0)
        Thread {
            player.volume = 0.5
            player.pan = 0.25
            _ = player.currentTime
            _ = player.isPlaying
            answered.signal()
        }.start()
        let free = answered.wait(timeout: .now() + 10) == .success
        out.gate.signal()
        #expect(free, "the player's lock was held while the output opened")
        if !free { answered.wait() }
        #expect(played.wait(timeout: .now() + 10) == .success)
        #expect(player.isPlaying)
        #expect(player.outputName == "slow")
        player.stop()
    }

    @Test func aStopWhileTheOutputOpensCancelsIt() throws {
        let out = SlowOpeningOutput()
        let player = AudioPlayer(source: RampSource(frames: 48_000), output: { out })
        let played = DispatchSemaphore(value: 0)
        Thread {
            _ = player.play()
            played.signal()
        }.start()
        #expect(out.entered.wait(timeout: .now() + 10) == .success)
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            player.stop()
            stopped.signal()
        }.start()
        let free = stopped.wait(timeout: .now() + 10) == .success
        out.gate.signal()
        #expect(free, "stop waited for the output to open")
        if !free { stopped.wait() }
        #expect(played.wait(timeout: .now() + 10) == .success)
        #expect(!player.isPlaying)
        #expect(player.outputName == nil)
    }
}
