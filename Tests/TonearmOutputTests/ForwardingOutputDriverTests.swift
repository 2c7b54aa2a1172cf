// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization
import Testing
import TonearmCore
import TonearmOutput
import TonearmTestSupport

/// ``ForwardingOutputDriver`` hands every requirement of ``AudioOutputDriver`` to its inner
/// driver — also those with do-nothing defaults (`drain`, `flush`, `watchForReturn`), which a
/// hand-written wrapper used to lose. The inner driver here records what reaches it (a recorder,
/// not a device: what is under test is the forwarding itself; the wrappers over real drivers are
/// exercised by the suites that use them).
struct ForwardingOutputDriverTests {
    final class Recorder: AudioOutputDriver, Sendable {
        let calls = Mutex<[String]>([])
        let watch = OutputReturnWatch(probe: { false }, wakePath: nil, onReturn: {})
        let (stream, continuation) = AsyncStream<AudioOutputEvent>.makeStream()
        func note(_ s: String) { calls.withLock { $0.append(s) } }

        var name: String { "recorder" }
        var format: AudioFormat { .interleavedFloat(sampleRate: 32_000, channels: 3) }
        var isAudible: Bool { true }
        func open(format: AudioFormat) throws { note("open \(Int(format.sampleRate))") }
        func start(source: any AudioRenderSource) throws { note("start") }
        func pause() { note("pause") }
        func resume() { note("resume") }
        func stop() { note("stop") }
        func close() { note("close") }
        func drain(timeout: Double) { note("drain \(timeout)") }
        func flush(replacing replace: () -> Void) {
            note("flush begins")
            replace()
            note("flush ends")
        }
        func setVolume(_ volume: Float) { note("volume \(volume)") }
        var latency: Double { 0.125 }
        var framesPlayed: Int64 { 4_242 }
        var underrunCount: Int { 7 }
        var events: AsyncStream<AudioOutputEvent> { stream }
        func watchForReturn(_ onReturn: @escaping @Sendable () -> Void) -> OutputReturnWatch? {
            note("watch")
            return watch
        }
    }

    /// A wrapper that changes nothing: it declares `inner` and nothing else.
    final class Plain: ForwardingOutputDriver, Sendable {
        let inner: any AudioOutputDriver
        init(_ inner: any AudioOutputDriver) { self.inner = inner }
    }

    @Test func everyRequirementReachesTheInnerDriver() async throws {
        let recorder = Recorder()
        let driver: any AudioOutputDriver = Plain(recorder)
        #expect(driver.name == "recorder")
        #expect(driver.format.channelCount == 3)
        #expect(driver.isAudible)
        #expect(driver.latency == 0.125)
        #expect(driver.framesPlayed == 4_242)
        #expect(driver.underrunCount == 7)

        try driver.open(format: .interleavedFloat(sampleRate: 44_100, channels: 2))
        try driver.start(source: SineSource())
        driver.pause()
        driver.resume()
        driver.setVolume(0.5)
        driver.flush(replacing: { recorder.note("replaced") })
        driver.drain(timeout: 2)
        let watch = driver.watchForReturn({})
        driver.stop()
        driver.close()
        watch?.cancel()

        #expect(watch === recorder.watch, "the inner driver's watch, not the default's nil")
        #expect(recorder.calls.withLock { $0 } == [
            "open 44100", "start", "pause", "resume", "volume 0.5",
            "flush begins", "replaced", "flush ends", "drain 2.0", "watch", "stop", "close",
        ])

        recorder.continuation.yield(.bufferChanged(length: 0.25))
        recorder.continuation.finish()
        var seen: [AudioOutputEvent] = []
        for await e in driver.events { seen.append(e) }
        #expect(seen == [.bufferChanged(length: 0.25)])
    }

    @Test func aWrapperChangesOnlyWhatItImplements() throws {
        // TappedOutput keeps the inner driver's timing and flush, and records its events.
        let recorder = Recorder()
        let tapped = TappedOutput(recorder)
        tapped.flush(replacing: {})
        #expect(tapped.latency == 0.125)
        #expect(tapped.watchForReturn({}) === recorder.watch)
        #expect(recorder.calls.withLock { $0 } == ["flush begins", "flush ends", "watch"])
        recorder.watch.cancel()
    }
}
