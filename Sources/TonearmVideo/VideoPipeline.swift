// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCore

/// Where a ``VideoPipeline`` gets its frames: a video decoder.
///
/// Threading: after the pipeline takes a source, only the pipeline's decoding thread calls it,
/// one call at a time.
public protocol VideoFrameSource: AnyObject, Sendable {
    /// The next frame in presentation order, or nil at the end of the stream. Throws when
    /// decoding cannot go on (damage a decoder can skip is skipped and counted by it).
    func nextFrame() throws -> VideoFrame?
    /// Moves so that the next frame is the one shown at `seconds` (`exact`), or the key frame
    /// at or before it (not exact: fast, for scrubbing).
    func seek(to seconds: Double, exact: Bool) throws
}

/// What shows the frames a ``VideoPipeline`` presents: a window, a file writer, a test.
///
/// Threading: called on the pipeline's presenting thread only. `show` must not wait for long:
/// the next frame's time does not wait for it.
public protocol VideoFrameSink: AnyObject, Sendable {
    func show(_ frame: VideoFrame)
}

/// The master clock as the pipeline reads it: where the item is and how fast it moves.
public struct VideoClockReading: Sendable, Hashable {
    /// Seconds on the item's timeline — for a video with sound, the audio being heard now.
    public var time: Double
    /// 1 at normal speed, 0 when paused.
    public var rate: Double

    public init(time: Double, rate: Double) {
        self.time = time
        self.rate = rate
    }
}

/// What a ``VideoPipeline`` reports (on its own threads; read them from ``VideoPipeline/events``).
public enum VideoPipelineEvent: Sendable, Hashable {
    /// The first frame after a start or a seek is on screen (`isReadyForDisplay`).
    case readyForDisplay(time: Double)
    /// Every frame of the stream was presented or dropped (after the last seek).
    case ended
    /// Decoding stopped: the picture stays on its last frame; the sound is not the pipeline's.
    case failed(TonearmError)
    /// The decoder is ahead again: the queue has filled (or the stream was decoded to its end,
    /// or decoding stopped) after a start, a seek, or the queue running empty
    /// (``VideoBufferLevel/keepsUp`` became true).
    case buffered
    /// A frame of another shape than the one shown before it is on screen (the first frame; an
    /// HLS variant switch to another resolution): its size, pixel aspect ratio and rotation, as a
    /// frame without planes.
    case shapeChanged(VideoFrame)
}

/// How far the decoder is ahead of the presenter: for `isPlaybackLikelyToKeepUp` with video.
public struct VideoBufferLevel: Sendable, Hashable {
    /// Decoded frames waiting to be shown.
    public var queuedFrames: Int
    /// The most the queue holds.
    public var capacity: Int
    /// Every frame of the stream (after the last seek) is decoded, or decoding stopped.
    public var decodedToEnd: Bool
    /// The queue has filled (or the stream was decoded to its end) since the start, the last
    /// seek or the last time it ran empty: the picture keeps up.
    public var keepsUp: Bool
    /// Nothing decoded to show, and more to come: the picture has run dry.
    public var isEmpty: Bool { queuedFrames == 0 && !decodedToEnd }
    /// The queue is full or the stream decoded to its end.
    public var isFull: Bool { queuedFrames >= capacity || decodedToEnd }

    public init(queuedFrames: Int, capacity: Int, decodedToEnd: Bool, keepsUp: Bool) {
        self.queuedFrames = queuedFrames
        self.capacity = capacity
        self.decodedToEnd = decodedToEnd
        self.keepsUp = keepsUp
    }
}

/// Counts for a status line and for tests: what was shown and dropped, and the A−V difference.
public struct VideoPipelineStatistics: Sendable, Hashable {
    public var presentedFrames = 0
    /// Frames taken from the queue without being shown because they came too late.
    public var droppedFrames = 0
    /// The clock minus the shown frame's time when the last frame was shown (seconds; positive:
    /// the picture is late).
    public var lastAVDifference: Double?
}

/// Plays a video stream against a master clock: a decoding thread fills a small queue of frames
/// (three, as ffplay keeps), a presenting thread shows each when ``VideoSyncMachine`` says it is
/// due and drops those that came too late.
///
/// The clock is read, never driven: with sound, the player's audio position at the speaker;
/// without, a ``SystemVideoClock`` (``init(source:sink:systemClockAt:queueCapacity:)``). When
/// the clock's rate changes (pause, play, another rate), call ``clockChanged()``, so that a
/// presenter waiting for a due time decides again.
///
/// Threading: the public methods may be called from any thread. The source is called on the
/// decoding thread, the sink on the presenting thread; neither thread waits for the other but
/// through the queue (a full queue holds the decoder, an empty one the presenter). The threads
/// hold the pipeline's inner state, not the pipeline: releasing the pipeline stops them.
public final class VideoPipeline: Sendable {
    public typealias Clock = @Sendable () -> VideoClockReading

    private let core: VideoPipelineCore

    /// A pipeline whose master clock is `clock` (the audio). `queueCapacity` frames are decoded
    /// ahead (at least 2: the sync rules look at the frame after the due one).
    public init(source: any VideoFrameSource, sink: any VideoFrameSink, clock: @escaping Clock, queueCapacity: Int = 3) {
        core = VideoPipelineCore(source: source, sink: sink, clock: clock, systemClockAt: nil, queueCapacity: queueCapacity)
    }

    /// A pipeline for a video without sound: its clock runs with the host's from `itemTime`,
    /// paused until ``setRate(_:)``.
    public init(source: any VideoFrameSource, sink: any VideoFrameSink, systemClockAt itemTime: Double = 0,
                queueCapacity: Int = 3) {
        core = VideoPipelineCore(source: source, sink: sink, clock: nil, systemClockAt: itemTime, queueCapacity: queueCapacity)
    }

    deinit { core.stop() }

    /// What the pipeline reports, from now on.
    public var events: AsyncStream<VideoPipelineEvent> { core.broadcaster.stream() }

    public var statistics: VideoPipelineStatistics { core.statistics }

    /// How far the decoder is ahead (``VideoPipelineEvent/buffered`` says when it keeps up again).
    public var bufferLevel: VideoBufferLevel { core.bufferLevel }

    /// Starts the decoding and presenting threads (once; later calls do nothing).
    public func start() { core.start() }

    /// Moves to `seconds`: the queue is emptied, the decoder seeks, and the frame found there
    /// is shown at once (also when paused). A system clock moves there too.
    public func seek(to seconds: Double, exact: Bool = true) { core.seek(to: seconds, exact: exact) }

    /// The rate of a system clock (0 pauses); with an external clock, the same as
    /// ``clockChanged()``.
    public func setRate(_ rate: Double) { core.setRate(rate) }

    /// The master clock's rate or position changed (a pause, a play, another rate): the
    /// presenter decides again now rather than at the time it was waiting for.
    public func clockChanged() { core.clockChanged() }

    /// Stops both threads and waits for them (they never wait for long: the source's current
    /// `nextFrame` call and the sink's current `show` are the longest). Idempotent.
    public func stop() { core.stop() }
}

/// The state and threads of a ``VideoPipeline`` (see there).
private final class VideoPipelineCore: Sendable {
    typealias Clock = VideoPipeline.Clock

    private struct Queued: Sendable {
        var id: UInt64
        var frame: VideoFrame
    }

    private struct Shared: Sendable {
        var queue: [Queued] = []
        var nextID: UInt64 = 1
        /// Bumped by every seek: frames decoded for an older one are discarded.
        var generation: UInt64 = 0
        /// The seek the decoder has to make before it decodes on (with its generation).
        var pendingSeek: (seconds: Double, exact: Bool, generation: UInt64)?
        /// The generation whose stream the decoder finished (nil: not finished).
        var decodedToEnd: UInt64?
        /// The generation whose end was reported.
        var endReported: UInt64?
        /// The generation whose queue has filled (or was decoded to its end) since it began or
        /// the queue last ran empty (``VideoBufferLevel/keepsUp``).
        var keepingUp: UInt64?
        /// Set by a seek for the presenter, which owns the sync machine.
        var resetMachine = false
        var stopped = false
        var statistics = VideoPipelineStatistics()
        /// The system clock, when the video has no sound.
        var systemClock: SystemVideoClock?
    }

    private let source: any VideoFrameSource
    private let sink: any VideoFrameSink
    private let externalClock: Clock?
    private let capacity: Int
    private let shared = Mutex(Shared())
    private let decodeWake = DispatchSemaphore(value: 0)
    private let presentWake = DispatchSemaphore(value: 0)
    private let decoderDone = DispatchSemaphore(value: 0)
    private let presenterDone = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)
    let broadcaster = EventBroadcaster<VideoPipelineEvent>()

    init(source: any VideoFrameSource, sink: any VideoFrameSink, clock: Clock?, systemClockAt itemTime: Double?,
         queueCapacity: Int) {
        self.source = source
        self.sink = sink
        externalClock = clock
        capacity = max(2, queueCapacity)
        if let itemTime {
            shared.withLock { $0.systemClock = SystemVideoClock(itemTime: itemTime, hostTime: Self.hostSeconds(), rate: 0) }
        }
    }

    var statistics: VideoPipelineStatistics { shared.withLock { $0.statistics } }

    var bufferLevel: VideoBufferLevel {
        shared.withLock { s in
            VideoBufferLevel(queuedFrames: s.pendingSeek == nil ? s.queue.count : 0, capacity: capacity,
                             decodedToEnd: s.pendingSeek == nil && s.decodedToEnd == s.generation,
                             keepsUp: s.pendingSeek == nil && s.keepingUp == s.generation)
        }
    }

    /// Under the lock, after the decoder added to the queue or finished: whether the picture
    /// keeps up again (to be reported with ``VideoPipelineEvent/buffered``).
    private func becameBuffered(_ s: inout Shared, generation: UInt64) -> Bool {
        guard s.keepingUp != generation, s.queue.count >= capacity || s.decodedToEnd == generation else { return false }
        s.keepingUp = generation
        return true
    }

    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let decoder = Thread { [self] in
            nameCurrentThread("tonearm-vdecode")
            decodeLoop()
            decoderDone.signal()
        }
        decoder.name = "tonearm-vdecode"
        decoder.start()
        let presenter = Thread { [self] in
            nameCurrentThread("tonearm-vpresent")
            presentLoop()
            presenterDone.signal()
        }
        presenter.name = "tonearm-vpresent"
        presenter.start()
    }

    func seek(to seconds: Double, exact: Bool) {
        shared.withLock { s in
            s.generation += 1
            s.queue.removeAll()
            s.pendingSeek = (seconds, exact, s.generation)
            s.decodedToEnd = nil
            s.resetMachine = true
            s.systemClock?.move(to: seconds, atHostTime: Self.hostSeconds())
        }
        decodeWake.signal()
        presentWake.signal()
    }

    func setRate(_ rate: Double) {
        shared.withLock { $0.systemClock?.setRate(rate, atHostTime: Self.hostSeconds()) }
        presentWake.signal()
    }

    func clockChanged() {
        presentWake.signal()
    }

    func stop() {
        stopThreads()
        broadcaster.finish()
    }

    private func stopThreads() {
        let wasStarted = shared.withLock { s -> Bool in
            let first = !s.stopped
            s.stopped = true
            return first && started.load(ordering: .acquiring)
        }
        decodeWake.signal()
        presentWake.signal()
        guard wasStarted else { return }
        decoderDone.wait()
        presenterDone.wait()
    }

    private static func hostSeconds() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }

    private func readClock() -> VideoClockReading {
        if let externalClock { return externalClock() }
        let now = Self.hostSeconds()
        return shared.withLock { s in
            let c = s.systemClock ?? SystemVideoClock(hostTime: now)
            return VideoClockReading(time: c.time(atHostTime: now), rate: c.rate)
        }
    }

    // MARK: The decoding thread

    private func decodeLoop() {
        while true {
            enum Step { case stop, seek(Double, Bool, UInt64), wait, decode(UInt64) }
            let step: Step = shared.withLock { s in
                if s.stopped { return .stop }
                if let seek = s.pendingSeek {
                    s.pendingSeek = nil
                    return .seek(seek.seconds, seek.exact, seek.generation)
                }
                if s.decodedToEnd == s.generation || s.queue.count >= capacity { return .wait }
                return .decode(s.generation)
            }
            switch step {
            case .stop:
                return
            case .wait:
                decodeWake.wait()
            case .seek(let seconds, let exact, let generation):
                do {
                    try source.seek(to: seconds, exact: exact)
                } catch {
                    fail(error, generation: generation)
                }
            case .decode(let generation):
                let frame: VideoFrame?
                do {
                    frame = try source.nextFrame()
                } catch {
                    fail(error, generation: generation)
                    continue
                }
                let buffered = shared.withLock { s -> Bool in
                    guard s.generation == generation, s.pendingSeek == nil else { return false }
                    if let frame {
                        s.queue.append(Queued(id: s.nextID, frame: frame))
                        s.nextID += 1
                    } else {
                        s.decodedToEnd = generation
                    }
                    return becameBuffered(&s, generation: generation)
                }
                presentWake.signal()
                if buffered { broadcaster.yield(.buffered) }
            }
        }
    }

    private func fail(_ error: any Error, generation: UInt64) {
        let (current, buffered) = shared.withLock { s -> (Bool, Bool) in
            guard s.generation == generation else { return (false, false) }
            s.decodedToEnd = generation
            s.endReported = generation
            return (true, becameBuffered(&s, generation: generation))
        }
        guard current else { return }
        broadcaster.yield(.failed((error as? TonearmError) ?? .decodeFailed(path: "", detail: "\(error)")))
        if buffered { broadcaster.yield(.buffered) }
        presentWake.signal()
    }

    // MARK: The presenting thread

    private func presentLoop() {
        var machine = VideoSyncMachine()
        var shownShape: VideoFrame?
        while true {
            let (stop, reset, window, generation) = shared.withLock { s in
                let reset = s.resetMachine
                s.resetMachine = false
                return (s.stopped, reset, s.queue.prefix(3).map { VideoSyncMachine.Frame(id: $0.id, time: $0.frame.time) },
                        s.generation)
            }
            if stop { return }
            if reset { machine.reset() }
            let wasShowingAtOnce = machine.showsNextAtOnce
            let clock = readClock()
            var waitFor: Double? = nil
            var tookFrames = false
            for action in machine.decide(queue: window, clock: clock.time, rate: clock.rate) {
                switch action {
                case .present(let id, let lateness):
                    guard let frame = take(id: id, generation: generation, shown: true, lateness: lateness) else { break }
                    tookFrames = true
                    sink.show(frame)
                    if wasShowingAtOnce { broadcaster.yield(.readyForDisplay(time: frame.time)) }
                    let sameShape = shownShape.map {
                        $0.width == frame.width && $0.height == frame.height && $0.pixelAspectRatio == frame.pixelAspectRatio
                            && $0.rotation == frame.rotation
                    } ?? false
                    if !sameShape {
                        let shape = VideoFrame(pixelFormat: frame.pixelFormat, width: frame.width, height: frame.height, planes: [],
                                               time: frame.time, pixelAspectRatio: frame.pixelAspectRatio, rotation: frame.rotation)
                        shownShape = shape
                        broadcaster.yield(.shapeChanged(shape))
                    }
                case .drop(let id):
                    tookFrames = take(id: id, generation: generation, shown: false, lateness: nil) != nil || tookFrames
                case .wait(let seconds):
                    waitFor = seconds
                case .waitForEvent:
                    waitFor = nil
                }
            }
            if tookFrames {
                decodeWake.signal()
                continue  // the queue changed: decide again with what is there now
            }
            reportEndIfDone(generation: generation)
            if let waitFor {
                if waitFor > 0 { _ = presentWake.wait(timeout: .now() + .nanoseconds(Int(waitFor * 1e9))) }
            } else {
                presentWake.wait()
            }
        }
    }

    /// Takes frame `id` from the head of the queue if it is still there (no seek meanwhile).
    private func take(id: UInt64, generation: UInt64, shown: Bool, lateness: Double?) -> VideoFrame? {
        shared.withLock { s in
            guard s.generation == generation, let first = s.queue.first, first.id == id else { return nil }
            s.queue.removeFirst()
            // Run dry before the end: the picture no longer keeps up until the queue fills again.
            if s.queue.isEmpty && s.decodedToEnd != generation { s.keepingUp = nil }
            if shown {
                s.statistics.presentedFrames += 1
                s.statistics.lastAVDifference = lateness
            } else {
                s.statistics.droppedFrames += 1
            }
            return first.frame
        }
    }

    /// Reports the end once the decoder finished and the queue is empty (once per seek).
    private func reportEndIfDone(generation: UInt64) {
        let ended = shared.withLock { s -> Bool in
            guard s.generation == generation, s.decodedToEnd == generation, s.queue.isEmpty,
                  s.endReported != generation else { return false }
            s.endReported = generation
            return true
        }
        if ended { broadcaster.yield(.ended) }
    }
}
