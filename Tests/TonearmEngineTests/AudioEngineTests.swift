// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCodecs
import TonearmCore
import TonearmOutput
@testable import TonearmEngine
import TonearmTestSupport

/// The engine graph rendered offline (manual rendering): exact, repeatable results.
@Suite  final class AudioEngineTests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("engine") }
    deinit { dir.remove() }

    func makeEngine(rate: Double = 48000, channels: Int = 2, maxFrames: Int = 4096) throws -> AudioEngine {
        let e = AudioEngine()
        try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: rate, channels: channels),
                                        maximumFrameCount: maxFrames)
        return e
    }

    /// Renders `frames` frames in chunks of `chunk`; returns the channels.
    func render(_ e: AudioEngine, frames: Int, chunk: Int = 1000) throws -> [[Float]] {
        let ch = e.outputFormat.channelCount
        let buf = AudioPCMBuffer(format: .standard(sampleRate: e.outputFormat.sampleRate, channels: ch), frameCapacity: chunk)!
        var out = [[Float]](repeating: [], count: ch)
        var done = 0
        while done < frames {
            let n = min(chunk, frames - done)
            #expect(try e.renderOffline(n, to: buf) == .success)
            for c in 0..<ch { out[c] += buf.channel(c) }
            done += n
        }
        return out
    }

    /// A source the engine ends with, as a queue's player node: plays the frames it is given
    /// (ones), then has ended until it is given more.
    final class EndingKernel: EndingSource, @unchecked Sendable {
        /// Frames still to play: given on the control plane between render calls.
        let left = Atomic<Int>(0)
        private(set) var endedInLastCall = false
        private(set) var framesInLastCall = 0
        func render(inputs: UnsafeBufferPointer<NodeInput>, output: UnsafeMutablePointer<Float>,
                    frames: Int, channels: Int, timing: RenderTiming) {
            let n = min(frames, left.load(ordering: .acquiring))
            output.update(repeating: 1, count: n * channels)
            (output + n * channels).update(repeating: 0, count: (frames - n) * channels)
            left.subtract(n, ordering: .releasing)
            framesInLastCall = n
            endedInLastCall = n < frames || left.load(ordering: .acquiring) == 0
        }
    }

    /// Renders `e` in calls of `chunk` frames until it reports its end; returns the frames it
    /// said were real and how many of them were not ones.
    func renderToEnd(_ e: AudioEngine, chunk: Int) -> (frames: Int, wrong: Int) {
        let buf = UnsafeMutablePointer<Float>.allocate(capacity: chunk)
        defer { buf.deallocate() }
        var frames = 0, wrong = 0
        for _ in 0..<100 {
            let r = e.render(into: buf, frameCount: chunk, timing: .offline)
            let real = r.ended ? r.framesRendered : chunk
            frames += real
            wrong += (0..<real).count { buf[$0] != 1 }
            if r.ended { break }
        }
        return (frames, wrong)
    }

    /// An engine that ends with a source (a queue's node) reports each end with every frame
    /// before it, also after an earlier end — a queue given more after its end (a seek back), or
    /// ended, resumed and ended again. Before, the count of the first end's tail was kept: ended
    /// at a call's last frame, it made the next end drop the audio of its last call (476 of
    /// 1,500 frames here).
    @Test func anEndAfterAnEarlierEndKeepsItsLastFrames() throws {
        let e = try makeEngine(channels: 1, maxFrames: 1024)
        let k = EndingKernel()
        let node = AudioNode(kernel: k, inputs: 0, outputs: 1)
        e.attach(node)
        try e.connect(node, to: e.mainMixerNode, format: nil)
        e.endsWith = node
        try e.start()
        for (given, note) in [(2048, "an end at a call's last frame"), (1500, "the next end"), (700, "one after it")] {
            k.left.store(given, ordering: .releasing)
            let got = renderToEnd(e, chunk: 1024)
            #expect(got.frames == given && got.wrong == 0, "\(note): \(got.frames) frames (\(got.wrong) not the source's) for \(given)")
        }
    }

    func decodeAll(_ path: String) throws -> [[Float]] {
        let f = try AudioFile(path: path)
        let b = AudioPCMBuffer(format: f.processingFormat, frameCapacity: Int(f.length))!
        try f.read(into: b)
        return b.channelArrays()
    }

    func same(_ a: [Float], _ b: [Float], tolerance: Float = 0) -> Bool {
        guard a.count == b.count else { print("lengths \(a.count) vs \(b.count)"); return false }
        if let i = a.indices.first(where: { abs(a[$0] - b[$0]) > tolerance }) {
            print("first difference at \(i): \(a[i]) vs \(b[i])")
            return false
        }
        return true
    }

    @Test func aScheduledFilePlaysThroughTheMixerSampleForSample() throws {
        let path = dir.file("tone.flac")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "flac"], seconds: 1, rate: 48000)
        let e = try makeEngine()
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        try p.scheduleFile(try AudioFile(path: path))
        p.play()
        let out = try render(e, frames: 50_000)
        let src = try decodeAll(path)
        for c in 0..<2 {
            #expect(same(Array(out[c][..<48000]), src[c]))
            #expect(out[c][48000...].allSatisfy { $0 == 0 })
        }
    }

    @Test func offlineRendersAreBitIdenticalAcrossRuns() throws {
        let path = dir.file("noise.ogg")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=1:c=pink:r=44100:a=0.3", "-ac", "2", "-c:a", "libvorbis", path])
        func once() throws -> [[Float]] {
            let e = try makeEngine()   // 48 kHz: the 44.1 kHz file is resampled on the node's thread
            let p = AudioPlayerNode()
            e.attach(p)
            try e.connect(p, to: e.mainMixerNode, format: nil)
            p.volume = 0.7
            p.pan = 0.3
            try e.start()
            try p.scheduleFile(try AudioFile(path: path))
            p.play()
            return try render(e, frames: 50_000, chunk: 777)
        }
        let a = try once(), b = try once()
        #expect(same(a[0], b[0]) && same(a[1], b[1]))
        #expect(a[0].contains { $0 != 0 })
    }

    @Test func theMixerSumsAndPans() throws {
        let e = try makeEngine(maxFrames: 512)
        let a = AudioPlayerNode(), b = AudioPlayerNode()
        for n in [a, b] { e.attach(n); try e.connect(n, to: e.mainMixerNode, format: nil) }
        let fmt = AudioFormat.standard(sampleRate: 48000, channels: 2)
        let ba = AudioPCMBuffer(format: fmt, frameCapacity: 2000)!, bb = AudioPCMBuffer(format: fmt, frameCapacity: 2000)!
        ba.frameLength = 2000; bb.frameLength = 2000
        for f in 0..<2000 {
            ba.floatChannelData[0][f] = 0.25; ba.floatChannelData[1][f] = 0.25
            bb.floatChannelData[0][f] = 0.125; bb.floatChannelData[1][f] = -0.5
        }
        a.pan = -1          // a: left only
        b.volume = 0.5      // b: half
        try e.start()
        a.scheduleBuffer(ba)
        b.scheduleBuffer(bb)
        a.play(); b.play()
        let out = try render(e, frames: 2000, chunk: 500)
        #expect(out[0].allSatisfy { $0 == 0.25 + 0.0625 })
        #expect(out[1].allSatisfy { $0 == 0 - 0.25 })
    }

    @Test func aSegmentStartsAndEndsOnTheExactFrame() throws {
        let path = dir.file("seg.wav")
        try Fixtures.tone(path: path, codecArgs: ["-c:a", "pcm_f32le"], seconds: 1, rate: 48000, channels: 1)
        let e = try makeEngine(channels: 1)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        try p.scheduleSegment(try AudioFile(path: path), startingFrame: 12_345, frameCount: 10_000)
        p.play()
        let out = try render(e, frames: 12_000)
        let src = try decodeAll(path)[0]
        #expect(same(Array(out[0][..<10_000]), Array(src[12_345..<22_345])))
        #expect(out[0][10_000...].allSatisfy { $0 == 0 })
        #expect(throws: TonearmError.self) {
            try p.scheduleSegment(try AudioFile(path: path), startingFrame: 47_000, frameCount: 5_000)
        }
    }

    /// A started mono engine with a player node on its mixer, and a 0.1 s buffer (48 kHz) of silence.
    func playerWithABuffer() throws -> (AudioEngine, AudioPlayerNode, AudioPCMBuffer) {
        let e = try makeEngine(channels: 1, maxFrames: 1024)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 1), frameCapacity: 4800)!
        buf.frameLength = 4800
        return (e, p, buf)
    }

    @Test func completionsFireOnceAndNeverStaleAfterStop() throws {
        let (e, p, buf) = try playerWithABuffer()
        let fired = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        p.scheduleBuffer(buf, completionHandler: { t in fired.withLock { $0.append("stale \(t)") } })
        p.play()
        _ = try render(e, frames: 1024)       // part of the first buffer is rendered
        p.stop()                              // a "seek": stop, schedule again, play
        // As AVAudioPlayerNode.stop(): the discarded schedule's handler is called — here, before
        // stop() returns, and saying why (issue 23).
        #expect(fired.withLock { $0 } == ["stale stopped"])
        p.scheduleBuffer(buf, completionCallbackType: .dataRendered, completionHandler: { t in
            fired.withLock { $0.append("fresh \(t)") }
            done.signal()
        })
        p.play()
        _ = try render(e, frames: 10_000)
        #expect(done.wait(timeout: .now() + 10) == .success)
        // Each once; the stale one never with the type the fresh one reports.
        #expect(fired.withLock { $0 } == ["stale stopped", "fresh dataRendered"])
        p.stop()
        #expect(fired.withLock { $0 } == ["stale stopped", "fresh dataRendered"], "a completed handler is not called again")
    }

    /// Issue 23: what a stop discards — a looping buffer, schedules not yet reached, a
    /// played-back handler waiting for the output's latency, a buffer replaced by `.interrupts`
    /// — has its handler called once with `.stopped`, in schedule order, from that call; a
    /// handler may schedule again from there. A queue's own schedules (the package API) are not.
    @Test func aStopCallsTheHandlersOfWhatItDiscards() throws {
        let (e, p, buf) = try playerWithABuffer()
        let fired = Mutex<[String]>([])
        func note(_ name: String) -> AudioPlayerNode.CompletionHandler { { t in fired.withLock { $0.append("\(name) \(t)") } } }

        p.scheduleBuffer(buf, options: .loops, completionHandler: note("loop"))
        p.scheduleBuffer(buf, completionCallbackType: .dataConsumed, completionHandler: note("next"))
        p.play()
        _ = try render(e, frames: 2048)
        p.stop()
        #expect(fired.withLock { $0 } == ["loop stopped", "next stopped"])

        // A played-back handler whose item has been rendered, waiting for a long latency.
        fired.withLock { $0 = [] }
        p.setOutputLatency(30)
        let rendered = DispatchSemaphore(value: 0)
        p.scheduleBuffer(buf, completionCallbackType: .dataRendered, completionHandler: { _ in rendered.signal() })
        p.scheduleBuffer(buf, completionCallbackType: .dataPlayedBack, completionHandler: note("played"))
        p.play()
        _ = try render(e, frames: 12_000)
        #expect(rendered.wait(timeout: .now() + 10) == .success)
        p.stop()
        #expect(fired.withLock { $0 } == ["played stopped"])

        // `.interrupts` replaces what is scheduled: its handlers are called by that schedule.
        fired.withLock { $0 = [] }
        p.scheduleBuffer(buf, completionHandler: note("first"))
        p.scheduleBuffer(buf, options: .interrupts, completionHandler: note("second"))
        #expect(fired.withLock { $0 } == ["first stopped"])
        p.stop()
        #expect(fired.withLock { $0 } == ["first stopped", "second stopped"])
        // From a handler: schedule again (no deadlock; the new schedule stands).
        fired.withLock { $0 = [] }
        let again = DispatchSemaphore(value: 0)
        p.setOutputLatency(0)
        p.scheduleBuffer(buf, completionHandler: { t in
            fired.withLock { $0.append("outer \(t)") }
            if t == .stopped {
                p.scheduleBuffer(buf, completionHandler: { t in
                    fired.withLock { $0.append("inner \(t)") }
                    again.signal()
                })
            }
        })
        p.stop()
        p.play()
        _ = try render(e, frames: 10_000)
        #expect(again.wait(timeout: .now() + 10) == .success)
        #expect(fired.withLock { $0 } == ["outer stopped", "inner dataRendered"])

        // A queue's schedules: neither handler is called by a stop.
        fired.withLock { $0 = [] }
        let file = dir.file("queue.wav")
        try Fixtures.tone(path: file, codecArgs: ["-c:a", "pcm_f32le"], seconds: 1, rate: 48000, channels: 1)
        try p.scheduleSegment(try AudioFile(path: file), startingFrame: 0, frameCount: 48_000, gain: 1,
                              consumed: note("consumed"), rendered: note("rendered"))
        p.stop()
        #expect(fired.withLock { $0 } == [])
    }

    @Test func aGraphChangedWhileRenderingDropsAndRepeatsNothing() throws {
        let e = try makeEngine(channels: 1, maxFrames: 256)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        let n = 20_000
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 1), frameCapacity: n)!
        buf.frameLength = n
        for f in 0..<n { buf.floatChannelData[0][f] = Float(f) / Float(n) }
        p.scheduleBuffer(buf)
        p.play()
        var out = try render(e, frames: 5_000, chunk: 256)[0]
        // Attach and connect a second (silent) player, and re-route through a new mixer, mid-stream.
        let q = AudioPlayerNode()
        e.attach(q)
        try e.connect(q, to: e.mainMixerNode, format: nil)
        out += try render(e, frames: 5_000, chunk: 256)[0]
        let m = AudioMixerNode()
        e.attach(m)
        try e.connect(p, to: m, format: nil)
        try e.connect(m, to: e.mainMixerNode, format: nil)
        out += try render(e, frames: 10_000, chunk: 256)[0]
        let expected = (0..<n).map { Float($0) / Float(n) }
        #expect(same(out, expected))
    }

    @Test func aPlayedBackCompletionDoesNotHoldUpTheOnesBehindIt() throws {
        let e = try makeEngine(channels: 1, maxFrames: 1024)
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        p.setOutputLatency(0.5)
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 1), frameCapacity: 480)!
        buf.frameLength = 480
        let order = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        p.scheduleBuffer(buf, completionCallbackType: .dataPlayedBack) { t in
            order.withLock { $0.append("first \(t)") }
            done.signal()
        }
        p.scheduleBuffer(buf, completionCallbackType: .dataRendered) { t in
            order.withLock { $0.append("second \(t)") }
            done.signal()
        }
        p.play()
        _ = try render(e, frames: 4096, chunk: 1024)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(done.wait(timeout: .now() + 10) == .success)
        // The second was rendered right after the first, and is reported then; the first only
        // once the output's latency has passed.
        #expect(order.withLock { $0 } == ["second dataRendered", "first dataPlayedBack"])
    }

    /// A pass-through node that counts the engine's `engineWillRender` calls.
    final class CountingNode: AudioNode, @unchecked Sendable {
        let configured = Mutex(0)
        init() { super.init(kernel: PassThroughKernel(), inputs: 1, outputs: 1) }
        override func engineWillRender(format: AudioFormat, maximumFrames: Int) {
            configured.withLock { $0 += 1 }
        }
    }

    @Test func aGraphChangeDoesNotReconfigureNodesAlreadyRendering() throws {
        let e = try makeEngine(channels: 1, maxFrames: 256)
        let node = CountingNode()
        e.attach(node)
        try e.connect(node, to: e.mainMixerNode, format: nil)
        try e.start()
        _ = try render(e, frames: 512, chunk: 256)
        for _ in 0..<5 {
            let m = AudioMixerNode()
            e.attach(m)
            try e.connect(m, to: e.mainMixerNode, format: nil)
            _ = try render(e, frames: 256, chunk: 256)
            e.detach(m)
        }
        #expect(node.configured.withLock { $0 } == 1)
        // A new format (the engine stopped) builds every node again.
        e.stop()
        try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: 44100, channels: 1), maximumFrameCount: 256)
        #expect(node.configured.withLock { $0 } == 2)
    }

    @Test func fileAtAnotherRateAndChannelCountIsConverted() throws {
        let path = dir.file("mono441.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:duration=1:sample_rate=44100", "-c:a", "pcm_f32le", path])
        let e = try makeEngine()
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        try p.scheduleFile(try AudioFile(path: path))
        p.play()
        let out = try render(e, frames: 52_000)
        let span = try #require(nonSilentSpan(out[0], sampleRate: 48000))
        #expect(abs(span.count - 48_000) < 64, "\(span.count) frames")
        #expect(same(out[0], out[1]))  // mono duplicated into both channels
        let f = try #require(dominantFrequency(Array(out[0][4800..<43200]), sampleRate: 48000))
        #expect(abs(f - 1000) < 2)
    }

    /// The long run (scripts/bench longrun) found mono files at another rate than the queue's
    /// played at -3 dB (libswresample's mono → stereo matrix), mono files at the queue's rate at
    /// full level: a step in level at every join between the two. Both are now mapped alike.
    @Test func aMonoFileAtAnotherRateIsAsLoudAsOneAtTheEngineRate() throws {
        let tone = "0.5*sin(2*PI*1000*t)"
        let same = dir.file("mono48.wav"), other = dir.file("mono441.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=\(tone):s=48000:d=1", "-c:a", "pcm_f32le", same])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=\(tone):s=44100:d=1", "-c:a", "pcm_f32le", other])
        let e = try makeEngine()   // 48 kHz stereo
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        try p.scheduleFile(try AudioFile(path: same))
        try p.scheduleFile(try AudioFile(path: other))
        p.play()
        let out = try render(e, frames: 96_000)
        func rms(_ x: ArraySlice<Float>) -> Double { (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot() }
        let input = rms(ArraySlice(try decodeAll(same)[0][4800..<43200]))
        for c in 0..<2 {
            let atRate = rms(out[c][4800..<43200]), converted = rms(out[c][52800..<91200])
            #expect(abs(atRate / input - 1) < 0.001, "channel \(c): \(atRate) vs the file's \(input)")
            #expect(abs(converted / input - 1) < 0.01, "channel \(c): the resampled file at \(converted), the file \(input)")
        }
    }

    @Test func connectRefusesLoopsAndStrangersButAcceptsReconnecting() throws {
        let e = AudioEngine()
        let a = AudioMixerNode(), b = AudioMixerNode()
        e.attach(a)
        e.attach(b)
        try e.connect(a, to: b, format: nil)
        try e.connect(a, to: b, format: nil)            // the same connection again: fine
        try e.connect(b, to: e.mainMixerNode, format: nil)
        #expect(throws: TonearmError.self) { try e.connect(b, to: a, format: nil) }              // a loop
        #expect(throws: TonearmError.self) { try e.connect(AudioPlayerNode(), to: a, format: nil) } // not attached
        #expect(throws: TonearmError.self) { try e.connect(e.outputNode, to: a, format: nil) }      // no output
        #expect(throws: TonearmError.self) {
            try e.connect(a, to: b, format: .standard(sampleRate: 44100, channels: 2))            // not the engine's format
        }
        #expect(e.inputs(of: b).count == 1)
    }

    @Test func renderOfflineRefusesWhatItCannotDo() throws {
        let e = AudioEngine()
        let b = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 100)!
        #expect(try e.renderOffline(10, to: b) == .cannotDoInCurrentContext)
        try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: 48000, channels: 2), maximumFrameCount: 64)
        try e.start()
        #expect(throws: TonearmError.self) { try e.renderOffline(65, to: b) }
        #expect(throws: TonearmError.self) {
            try e.enableManualRenderingMode(.offline, format: .standard(sampleRate: 48000, channels: 2), maximumFrameCount: 0)
        }
    }
}

/// The engine driven by a real-time output (the null device clock).
@Suite struct AudioEngineRealtimeTests {
    @Test func playsInRealTimeAndReportsPlayback() async throws {
        let e = AudioEngine(output: { NullOutput() })
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        try e.start()
        #expect(e.isRunning)
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 4800)!
        buf.frameLength = 4800
        let played: AudioPlayerNodeCompletionCallbackType = try await withCheckedThrowingContinuation { c in
            p.scheduleBuffer(buf, completionCallbackType: .dataPlayedBack) { t in c.resume(returning: t) }
            p.play()
        }
        #expect(played == .dataPlayedBack)
        #expect(e.sampleTime >= 4800)
        #expect((p.playerTime?.sampleTime ?? 0) >= 4800)
        e.stop()
        #expect(!e.isRunning)
    }
}

/// The engine on a private PulseAudio server: moving its stream to another sink is a
/// configuration change, after which it goes on rendering.
@Suite(.serialized) struct AudioEnginePulseTests {
    @Test func movingTheStreamIsAConfigurationChangeAndTheEngineGoesOn() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let serverString = server.serverString
        let e = AudioEngine(output: { PulseOutput(server: serverString, streamName: "engine") })
        let p = AudioPlayerNode()
        e.attach(p)
        try e.connect(p, to: e.mainMixerNode, format: nil)
        let events = e.eventStream
        try e.start()
        let buf = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 4800)!
        buf.frameLength = 4800
        p.scheduleBuffer(buf, options: .loops)
        p.play()
        #expect(try server.pactl("load-module", "module-null-sink", "sink_name=second").status == 0)
        let inputs = try server.pactl("list", "short", "sink-inputs").stdout
        let index = try #require(inputs.split(separator: "\n").first?.split(separator: "\t").first)
        #expect(try server.pactl("move-sink-input", String(index), "second").status == 0)
        var sawChange = false
        for await ev in events {
            if ev == .configurationChange { sawChange = true; break }
        }
        #expect(sawChange)
        #expect(e.isRunning)
        let before = e.sampleTime
        // Still rendering after the move: the node's own completion of a fresh buffer arrives.
        let again = AudioPCMBuffer(format: .standard(sampleRate: 48000, channels: 2), frameCapacity: 480)!
        again.frameLength = 480
        let done: AudioPlayerNodeCompletionCallbackType = try await withCheckedThrowingContinuation { c in
            p.scheduleBuffer(again, options: .interrupts) { t in c.resume(returning: t) }
        }
        #expect(done == .dataRendered)
        #expect(e.sampleTime > before)
        e.stop()
    }
}
