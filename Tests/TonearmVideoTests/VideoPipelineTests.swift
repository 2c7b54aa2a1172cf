// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmTestSupport
import TonearmVideo

/// ``VideoPipeline`` with its real threads, a generated source and a recording sink: frames in
/// order, at their time against the clock the test sets, dropped when late, shown at once after
/// a seek, and the threads gone when the pipeline is.
@Suite struct VideoPipelineTests {
    /// `count` frames at `fps`; frame n is a 2×2 picture whose Y bytes are n (mod 256).
    final class CountingSource: VideoFrameSource, @unchecked Sendable {
        let count: Int
        let fps: Double
        let failAt: Int?
        private let state = Mutex((next: 0, seeks: [Double]()))
        let gone: DispatchSemaphore?

        init(count: Int, fps: Double = 100, failAt: Int? = nil, gone: DispatchSemaphore? = nil) {
            self.count = count
            self.fps = fps
            self.failAt = failAt
            self.gone = gone
        }

        deinit { gone?.signal() }

        var seeks: [Double] { state.withLock { $0.seeks } }

        func nextFrame() throws -> VideoFrame? {
            let n = state.withLock { s -> Int in
                defer { s.next += 1 }
                return s.next
            }
            if let failAt, n >= failAt { throw TonearmError.decodeFailed(path: "/clip.mp4", detail: "broken frame \(n)") }
            guard n < count else { return nil }
            let y = UInt8(truncatingIfNeeded: n)
            return VideoFrame(pixelFormat: .yuv420p, width: 2, height: 2,
                              planes: [.init(bytes: [y, y, y, y], bytesPerRow: 2, width: 2, height: 2),
                                       .init(bytes: [128], bytesPerRow: 1, width: 1, height: 1),
                                       .init(bytes: [128], bytesPerRow: 1, width: 1, height: 1)],
                              time: Double(n) / fps, duration: 1 / fps)
        }

        func seek(to seconds: Double, exact: Bool) throws {
            state.withLock { s in
                s.seeks.append(seconds)
                s.next = Int((seconds * fps + 1e-9).rounded(.down))
            }
        }
    }

    /// Records the times of the frames shown and streams them.
    final class RecordingSink: VideoFrameSink, Sendable {
        let shown = Mutex<[Double]>([])
        let stream: AsyncStream<Double>
        private let continuation: AsyncStream<Double>.Continuation

        init() {
            (stream, continuation) = AsyncStream<Double>.makeStream()
        }

        func show(_ frame: VideoFrame) {
            shown.withLock { $0.append(frame.time) }
            continuation.yield(frame.time)
        }

        var times: [Double] { shown.withLock { $0 } }
    }

    /// A clock the test sets (the audio position, frozen unless the test moves it).
    final class TestClock: Sendable {
        let reading = Mutex(VideoClockReading(time: 0, rate: 0))
        func set(_ time: Double, rate: Double) { reading.withLock { $0 = VideoClockReading(time: time, rate: rate) } }
        var read: VideoPipeline.Clock { { [self] in reading.withLock { $0 } } }
    }

    func approximately(_ a: Double, _ b: Double) -> Bool { abs(a - b) < 1e-9 }

    @Test func theFirstFrameIsShownAtOnceWhilePausedAndNothingElse() async throws {
        let clock = TestClock()
        let sink = RecordingSink()
        let pipeline = VideoPipeline(source: CountingSource(count: 50), sink: sink, clock: clock.read)
        defer { pipeline.stop() }
        let events = pipeline.events
        pipeline.start()
        let ready = try await waitForEvent(events, timeout: 10, "readyForDisplay") {
            if case .readyForDisplay = $0 { true } else { false }
        }
        #expect(ready == .readyForDisplay(time: 0))
        // Paused, a seek shows the frame of the new place (and only then does anything show).
        pipeline.seek(to: 0.2)
        let moved = try await waitForEvent(events, timeout: 10, "readyForDisplay after the seek") {
            if case .readyForDisplay = $0 { true } else { false }
        }
        #expect(moved == .readyForDisplay(time: 0.2))
        let times = sink.times
        #expect(times.count == 2)
        #expect(times.first == 0)
        #expect(times.last.map { approximately($0, 0.2) } == true)
    }

    /// The clock stands at 0.155 s: the frames before it are shown or dropped, the one due last
    /// (0.15) is on screen, none after it; then the clock jumps past the end and the rest are
    /// dropped up to the last frame, which is shown, and the end is reported.
    @Test func framesFollowTheClockAndLateOnesAreDropped() async throws {
        let clock = TestClock()
        clock.set(0.155, rate: 1)
        let sink = RecordingSink()
        let pipeline = VideoPipeline(source: CountingSource(count: 40), sink: sink, clock: clock.read)
        defer { pipeline.stop() }
        let events = pipeline.events
        let shown = sink.stream
        pipeline.start()
        _ = try await withDeadline(10, "the frame of 0.15 s") {
            for await t in shown where abs(t - 0.15) < 1e-9 { return t }
            return -1
        }
        var stats = pipeline.statistics
        #expect(stats.presentedFrames + stats.droppedFrames == 16)
        #expect(stats.droppedFrames > 0)
        #expect(stats.lastAVDifference.map { abs($0 - 0.005) < 1e-9 } == true)
        #expect(sink.times == sink.times.sorted())
        #expect(sink.times.allSatisfy { $0 <= 0.155 })

        clock.set(10, rate: 1)
        pipeline.clockChanged()
        _ = try await waitForEvent(events, timeout: 10, "the end") { $0 == .ended }
        stats = pipeline.statistics
        #expect(stats.presentedFrames + stats.droppedFrames == 40)
        #expect(sink.times.last.map { approximately($0, 0.39) } == true)
        #expect(Set(sink.times).count == sink.times.count)
    }

    /// Without sound the pipeline's own clock runs at the rate set: every frame is shown or
    /// dropped, in order, the last one shown, and the end reported.
    @Test func aVideoWithoutSoundPlaysOnItsOwnClock() async throws {
        let sink = RecordingSink()
        let pipeline = VideoPipeline(source: CountingSource(count: 30), sink: sink, systemClockAt: 0)
        defer { pipeline.stop() }
        let events = pipeline.events
        pipeline.start()
        pipeline.setRate(1)
        _ = try await waitForEvent(events, timeout: 10, "the end") { $0 == .ended }
        let stats = pipeline.statistics
        #expect(stats.presentedFrames + stats.droppedFrames == 30)
        #expect(sink.times.first == 0)
        #expect(sink.times.last.map { approximately($0, 0.29) } == true)
        #expect(sink.times == sink.times.sorted())
    }

    @Test func aDecoderThatFailsIsReportedAndWhatCameBeforeIsShown() async throws {
        let clock = TestClock()
        clock.set(10, rate: 1)
        let sink = RecordingSink()
        let pipeline = VideoPipeline(source: CountingSource(count: 40, failAt: 10), sink: sink, clock: clock.read)
        defer { pipeline.stop() }
        let events = pipeline.events
        pipeline.start()
        let failed = try await waitForEvent(events, timeout: 10, "the failure") {
            if case .failed = $0 { true } else { false }
        }
        guard case .failed(let error) = failed else { return }
        #expect("\(error)".contains("broken frame 10"))
        #expect(sink.times.allSatisfy { $0 < 0.1 })
    }

    @Test func aSeekAsksTheSourceAndDiscardsWhatWasQueued() async throws {
        let clock = TestClock()
        clock.set(1.0, rate: 0)
        let source = CountingSource(count: 500)
        let sink = RecordingSink()
        let pipeline = VideoPipeline(source: source, sink: sink, clock: clock.read)
        defer { pipeline.stop() }
        let events = pipeline.events
        pipeline.start()
        _ = try await waitForEvent(events, timeout: 10, "the first frame") { if case .readyForDisplay = $0 { true } else { false } }
        pipeline.seek(to: 3.0, exact: true)
        let ready = try await waitForEvent(events, timeout: 10, "the frame after the seek") {
            if case .readyForDisplay = $0 { true } else { false }
        }
        #expect(ready == .readyForDisplay(time: 3.0))
        #expect(source.seeks == [3.0])
        #expect(sink.times.count == 2)
    }

    /// Released without `stop()`, the pipeline ends its threads: they hold its inner state, not
    /// the pipeline, and the source (held by that state) goes away with them.
    @Test func releasingThePipelineEndsItsThreads() async throws {
        let gone = DispatchSemaphore(value: 0)
        let sink = RecordingSink()
        do {
            let clock = TestClock()
            let pipeline = VideoPipeline(source: CountingSource(count: 100, gone: gone), sink: sink, clock: clock.read)
            let events = pipeline.events
            pipeline.start()
            _ = try await waitForEvent(events, timeout: 10, "the first frame") { if case .readyForDisplay = $0 { true } else { false } }
        }
        let released = await withCheckedContinuation { c in
            DispatchQueue.global().async { c.resume(returning: gone.wait(timeout: .now() + 10) == .success) }
        }
        #expect(released)
    }

    /// A source that decodes a frame only when the test allows it (a decoder waiting for the
    /// network, say).
    final class GatedSource: VideoFrameSource, @unchecked Sendable {
        let inner: CountingSource
        private let permits = DispatchSemaphore(value: 0)
        init(_ inner: CountingSource) { self.inner = inner }
        func allow(_ n: Int) { for _ in 0..<n { permits.signal() } }
        func nextFrame() throws -> VideoFrame? {
            permits.wait()
            return try inner.nextFrame()
        }
        func seek(to seconds: Double, exact: Bool) throws { try inner.seek(to: seconds, exact: exact) }
    }

    /// ``VideoPipeline/bufferLevel`` and ``VideoPipelineEvent/buffered`` (what
    /// `PlayerItem.isPlaybackLikelyToKeepUp` counts of the picture): the picture keeps up once
    /// the queue has filled, not while frames trickle in; it stops keeping up when the queue runs
    /// empty before the end, and `.buffered` says when it keeps up again.
    @Test func thePictureKeepsUpOnceItsQueueHasFilledAndNotAfterItRanEmpty() async throws {
        let clock = TestClock()
        let sink = RecordingSink()
        let source = GatedSource(CountingSource(count: 50))
        let pipeline = VideoPipeline(source: source, sink: sink, clock: clock.read, queueCapacity: 3)
        defer {
            source.allow(100)  // the decoding thread is not left waiting
            pipeline.stop()
        }
        let events = pipeline.events
        let shown = sink.stream
        pipeline.start()
        #expect(!pipeline.bufferLevel.keepsUp)
        // One frame: shown at once; the queue is empty, the picture does not keep up.
        source.allow(1)
        _ = try await waitForEvent(events, timeout: 10, "readyForDisplay") { if case .readyForDisplay = $0 { true } else { false } }
        #expect(!pipeline.bufferLevel.keepsUp)
        #expect(pipeline.bufferLevel.isEmpty)
        // Three more fill the queue: it keeps up, said once.
        source.allow(3)
        _ = try await waitForEvent(events, timeout: 10, "buffered") { $0 == .buffered }
        let full = pipeline.bufferLevel
        #expect(full.keepsUp && full.isFull && full.queuedFrames == 3, "\(full)")
        // The clock runs past them: the queue runs empty (nothing more decoded), and the picture
        // no longer keeps up.
        clock.set(0.035, rate: 1)
        pipeline.clockChanged()
        _ = try await withDeadline(10, "the frame of 0.03 s") {
            for await t in shown where abs(t - 0.03) < 1e-9 { return t }
            return -1
        }
        let dry = pipeline.bufferLevel
        #expect(!dry.keepsUp && dry.isEmpty, "\(dry)")
        // Frames again: it keeps up again once the queue is full, and says so.
        source.allow(3)
        _ = try await waitForEvent(events, timeout: 10, "buffered again") { $0 == .buffered }
        #expect(pipeline.bufferLevel.keepsUp)
    }
}
