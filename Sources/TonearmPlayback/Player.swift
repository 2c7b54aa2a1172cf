// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Observation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmDSP
import TonearmEngine
import TonearmNetwork
import TonearmOutput
import TonearmVideo

/// Plays one ``PlayerItem`` at a time — a local file, a progressive HTTP(S) file or an internet
/// radio stream — with buffering that waits rather than stutters (the counterpart of `AVPlayer`).
///
/// - ``play()`` sets the rate; the player plays as soon as the item is likely to keep up, and
///   reports ``TimeControlStatus/waitingToPlayAtSpecifiedRate(_:)`` with the reason until then.
///   When the audio runs out before the end (the network is late) it reports
///   ``PlayerEvent/playbackStalled``, waits — the position stays where the audio stopped — and
///   goes on once ``PlayerItem/isPlaybackLikelyToKeepUp``.
/// - ``seek(to:toleranceBefore:toleranceAfter:)`` returns true once the audio at the target is
///   ready, false when a later seek or a new item superseded it: completions are never stale.
/// - A player with a rate keeps itself alive (there is no "player must be retained" pitfall);
///   a paused player that nobody holds goes away and stops its output.
///
/// The item's audio goes decoder thread → lock-free ring → render thread → equaliser → mixer →
/// output, the same render path as every other player.
///
/// Video: while the item has a video track and a ``PlayerItemVideoOutput`` is attached to it
/// (or a ``PlayerVideoRenderer`` to the player), a ``VideoPipeline`` decodes the picture on a
/// thread of its own and presents each frame when the audio at the speaker reaches it (the
/// master clock; extrapolated between render calls from the host time of the last one). Seeks,
/// pauses and rate changes move it with the audio; a new item or the end stops it. Without an
/// output nothing about video is opened or decoded.
///
/// Threading: every member may be called from any thread. Actions run in order on the player's
/// control queue; events come from there, never from the render thread.
public final class Player: @unchecked Sendable, Observable {
    /// The equaliser (10 graphic bands, flat and bit-transparent until changed).
    public let eq = AudioUnitEQ(preset: .flat)

    private struct PendingSeek {
        /// Completed by the first audio of this generation or a later one.
        var generation: UInt64
        var target: Double
        var completion: @Sendable (Bool) -> Void
    }

    private struct State {
        var machine = PlayerStateMachine()
        var item: PlayerItem?
        var runtime: PlayerRuntime?
        var sampleRate: Double = 48_000
        /// The generation the runtime decodes, and the time it starts at.
        var decodingGeneration: UInt64 = 0
        var generationStart: Double = 0
        /// The last time reported for the decoding generation (time does not run backwards).
        var lastTime: Double = 0
        var volume: Float = 1
        var muted = false
        var keepAlive: Player?
        var seeks: [PendingSeek] = []
        var decodeError: TonearmError?
        var lastError: TonearmError?
        /// Watches for a lost output to answer again (from its loss until it does).
        var outputWatch: OutputReturnWatch?
        /// Bumped when the item is replaced: metadata scheduled for the old one is dropped.
        var itemEpoch: UInt64 = 0
        /// The video of the current item, while outputs or renderers want it.
        var video: VideoRun?
        var renderers: [any PlayerVideoRenderer] = []
        /// The last time the video clock reported (it does not run backwards within a generation).
        var videoLastTime: Double = 0
        /// Whether the last seek asked for the exact frame (zero tolerances) or a key frame.
        var seekExact = true
        var readyForDisplay = false
        /// The statistics of the item's last pipeline, once stopped (by the end, say).
        var stoppedVideoStatistics: VideoPipelineStatistics?
        /// After the sound's end was rendered: the video plays on to the end of what was
        /// rendered (the output still holds it), on the host's clock from `time` at `host`.
        /// The end event is reported when the drain is over (the picture has reached the end too).
        var videoDrain: (time: Double, host: UInt64, until: Double, rate: Double)?
        var endEventAfterDrain: PlayerEvent?
    }

    /// A running video pipeline and what it was made for.
    private struct VideoRun {
        var pipeline: VideoPipeline
        var fanout: VideoFanout
        var epoch: UInt64
        var format: VideoFrame.PixelFormat
        /// The item's outputs among the run's sinks (as last reconciled): with the player's
        /// renderers of the moment, the sinks (``Player/retargetVideo(_:)``).
        var outputs: [any PlayerVideoRenderer]
        /// Cancels the video's reader of a network item's download or HLS stream (before the
        /// pipeline stops: its decoder may be waiting for bytes).
        var cancelNetwork: (@Sendable () -> Void)?

        func stop() {
            cancelNetwork?()
            pipeline.stop()
        }
    }

    private let lock = Mutex(State())
    private let queue = DispatchQueue(label: "tonearm.player")
    private let broadcaster = EventBroadcaster<PlayerEvent>()
    /// Observation (`withObservationTracking`, SwiftUI-style observers): ``timeControlStatus``,
    /// ``rate``, ``currentItem`` and ``isReadyForDisplay`` report their reads here and their
    /// changes on the control queue, as they happen.
    private let registrar = ObservationRegistrar()
    private let makeOutput: @Sendable () throws -> any AudioOutputDriver
    private let observers: PlayerTimeObservers

    /// A player with no item, playing through the output `output` makes when an item is ready
    /// (by default PulseAudio when the program registered it and a server answers, otherwise the
    /// silent real-time null output).
    public init(output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        makeOutput = output
        let box = WeakPlayer()
        observers = PlayerTimeObservers(now: { box.player?.currentTime() ?? 0 })
        box.player = self
    }

    /// A player for `item` (loading starts at once).
    public convenience init(playerItem item: PlayerItem?,
                            output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        self.init(output: output)
        replaceCurrentItem(with: item)
    }

    /// A player for a new item for `url` (a `file:` URL or `http`/`https`).
    public convenience init(url: URL, output: @escaping @Sendable () throws -> any AudioOutputDriver = QueuePlayer.automaticOutput) {
        self.init(playerItem: PlayerItem(url: url), output: output)
    }

    deinit {
        let (rt, item, video) = lock.withLock { s in (s.runtime, s.item, s.video) }
        video?.stop()
        item?.detach()
        rt?.close()
        for seek in lock.withLock({ $0.seeks }) { seek.completion(false) }
    }

    /// Events, from the moment of the call: the player's and its current item's. A new stream per call.
    public var events: AsyncStream<PlayerEvent> { broadcaster.stream(bufferingNewest: 1024) }

    // MARK: Item

    /// The item being played.
    public var currentItem: PlayerItem? {
        registrar.access(self, keyPath: \.currentItem)
        return lock.withLock { $0.item }
    }

    /// Plays `item` instead of the current one (nil: none). The current item's fetching stops;
    /// pending seeks complete with false. The rate stays: a playing player plays the new item
    /// once it is ready.
    public func replaceCurrentItem(with item: PlayerItem?) {
        let (old, seeks) = lock.withLock { s -> (PlayerItem?, [PendingSeek]) in
            let old = s.item
            s.item = item
            s.itemEpoch += 1
            s.decodeError = nil
            s.stoppedVideoStatistics = nil
            s.videoDrain = nil
            s.endEventAfterDrain = nil
            let seeks = s.seeks
            s.seeks.removeAll()
            enqueue(s.machine.handle(.itemReplaced(loading: item != nil)), in: &s)
            return (old, seeks)
        }
        for seek in seeks { seek.completion(false) }
        queue.async { [self] in
            if let old, old !== item { old.detach() }
            registrar.withMutation(of: self, keyPath: \.currentItem) {}
            broadcaster.yield(.currentItemChanged)
            guard let item else { return }
            let epoch = lock.withLock { $0.itemEpoch }
            item.attach(PlayerItem.Attachment(
                signal: { [weak self] signal in self?.itemSignal(signal, epoch: epoch) },
                currentTime: { [weak self] in self?.currentTime() ?? 0 },
                videoBuffer: { [weak self] in self?.videoBufferLevel(epoch: epoch) }))
        }
    }

    // MARK: Transport

    /// Plays at ``defaultRate`` (after the end: from the start).
    public func play() { handle(.play) }

    /// Pauses (the rate becomes 0).
    public func pause() { handle(.pause) }

    /// The playback rate: 0 is paused, 1 normal; other rates change the speed and keep the
    /// pitch (0.25…4). Setting a rate other than 0 plays.
    public var rate: Float {
        get {
            registrar.access(self, keyPath: \.rate)
            return lock.withLock { $0.machine.rate }
        }
        set { handle(.setRate(newValue == 0 ? 0 : Self.clampRate(newValue))) }
    }

    /// The rate ``play()`` uses (1 unless changed).
    public var defaultRate: Float {
        get { lock.withLock { $0.machine.defaultRate } }
        set { lock.withLock { $0.machine.defaultRate = Self.clampRate(newValue) } }
    }

    private static func clampRate(_ r: Float) -> Float {
        let range = TimeStretcher.rateRange
        guard r.isFinite else { return 1 }
        return Float(min(max(Double(r), range.lowerBound), range.upperBound))
    }

    /// Whether the player is playing, paused, or waiting, and why.
    public var timeControlStatus: TimeControlStatus {
        registrar.access(self, keyPath: \.timeControlStatus)
        return lock.withLock { $0.machine.status }
    }

    /// Why the player waits (nil when it does not).
    public var reasonForWaitingToPlay: WaitingReason? {
        if case .waitingToPlayAtSpecifiedRate(let r) = timeControlStatus { return r }
        return nil
    }

    /// The last error of the output (it could not be opened, or went away), if any.
    public var lastError: TonearmError? { lock.withLock { $0.lastError } }

    /// Volume 0…1 of this player (ramped, no click).
    public var volume: Float {
        get { lock.withLock { $0.volume } }
        set {
            lock.withLock { s in
                s.volume = max(0, min(1, newValue.isFinite ? newValue : 0))
                applyGain(s)
            }
        }
    }

    /// Silences the player without changing ``volume``.
    public var isMuted: Bool {
        get { lock.withLock { $0.muted } }
        set {
            lock.withLock { s in
                s.muted = newValue
                applyGain(s)
            }
        }
    }

    /// Lock held.
    private func applyGain(_ s: State) {
        s.runtime?.renderer.commands.push(.gain(target: s.muted ? 0 : s.volume, frames: 480))
    }

    /// Render underruns since the item's output opened (the decoder or the network was late).
    public var underrunCount: Int { lock.withLock { $0.runtime?.renderer.underruns.load(ordering: .relaxed) ?? 0 } }

    /// The name of the output in use (nil while none is open).
    public var outputName: String? { lock.withLock { $0.runtime?.driver.name } }

    /// Where playback is in the current item, in seconds: the audio being heard now (what was
    /// rendered, less what the output still holds). It never goes back except by a seek.
    public func currentTime() -> Double {
        lock.withLock { s in
            guard let rt = s.runtime, s.machine.runtimeOpen,
                  rt.renderer.positionGeneration.load(ordering: .acquiring) == s.decodingGeneration else {
                return s.generationStart
            }
            let rendered = Double(rt.renderer.positionFrame.load(ordering: .relaxed)) / s.sampleRate
            let heard = max(s.generationStart, rendered - rt.driver.latency * Double(s.machine.decodingRate), s.lastTime)
            s.lastTime = heard
            return heard
        }
    }

    /// Moves to `seconds` in the current item. The sound lands exactly whatever the tolerances;
    /// the picture lands on the exact frame when both tolerances are zero, else on the key
    /// frame at or before `seconds` (fast, for scrubbing) and plays on from there. Returns true once the decoder stands there
    /// (the network request for it answered; the audio follows),
    /// false when the item cannot seek (a live stream), has failed, or a later seek or another
    /// item came first. A playing player goes on from there.
    @discardableResult
    public func seek(to seconds: Double, toleranceBefore: Double = .infinity, toleranceAfter: Double = .infinity) async -> Bool {
        await withCheckedContinuation { c in
            seek(to: seconds, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter) { c.resume(returning: $0) }
        }
    }

    /// The completion-handler form of ``seek(to:toleranceBefore:toleranceAfter:)``; the handler
    /// runs on the player's control queue or the caller's thread (when it fails at once).
    public func seek(to seconds: Double, toleranceBefore: Double = .infinity, toleranceAfter: Double = .infinity,
                     completionHandler: @escaping @Sendable (Bool) -> Void) {
        let item = currentItem
        var duration = 0.0
        if let item {
            guard item.status == .readyToPlay || item.status == .unknown else { return completionHandler(false) }
            if item.status == .readyToPlay {
                guard let range = item.seekableTimeRanges.first else { return completionHandler(false) }
                duration = range.end
            } else {
                duration = .infinity
            }
        } else {
            return completionHandler(false)
        }
        let target = max(0, min(seconds.isFinite ? seconds : 0, duration))
        let superseded = lock.withLock { s -> [PendingSeek] in
            let old = s.seeks
            s.seeks.removeAll()
            s.seekExact = toleranceBefore == 0 && toleranceAfter == 0
            enqueue(s.machine.handle(.seek(seconds: target)), in: &s)
            s.seeks.append(PendingSeek(generation: s.machine.generation, target: target, completion: completionHandler))
            return old
        }
        for seek in superseded { seek.completion(false) }
    }

    // MARK: Time observers

    /// Calls `block` with the current time every `interval` seconds of playback, and whenever
    /// playback starts, stops or jumps. On `queue` (a private serial queue when nil).
    public func addPeriodicTimeObserver(forInterval interval: Double, queue: DispatchQueue? = nil,
                                        using block: @escaping @Sendable (Double) -> Void) -> TimeObserverToken {
        let token = observers.addPeriodic(interval: interval, queue: queue, block: block)
        syncObservers()
        return token
    }

    /// Calls `block` with the time crossed each time playback crosses one of `times` (seconds).
    /// Seeking over a time does not call it. On `queue` (a private serial queue when nil).
    public func addBoundaryTimeObserver(forTimes times: [Double], queue: DispatchQueue? = nil,
                                        using block: @escaping @Sendable (Double) -> Void) -> TimeObserverToken {
        let token = observers.addBoundary(times: times, queue: queue, block: block)
        syncObservers()
        return token
    }

    /// Stops an observer.
    public func removeTimeObserver(_ token: TimeObserverToken) { observers.remove(token) }

    /// ``addPeriodicTimeObserver(forInterval:queue:using:)`` as an async sequence; the observer
    /// goes away when the iteration ends.
    public func periodicTimes(interval: Double) -> AsyncStream<Double> {
        let (stream, c) = AsyncStream<Double>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let token = addPeriodicTimeObserver(forInterval: interval) { c.yield($0) }
        c.onTermination = { [weak self] _ in self?.removeTimeObserver(token) }
        return stream
    }

    /// ``addBoundaryTimeObserver(forTimes:queue:using:)`` as an async sequence of the times crossed.
    public func boundaryCrossings(_ times: [Double]) -> AsyncStream<Double> {
        let (stream, c) = AsyncStream<Double>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let token = addBoundaryTimeObserver(forTimes: times) { c.yield($0) }
        c.onTermination = { [weak self] _ in self?.removeTimeObserver(token) }
        return stream
    }

    private func syncObservers() {
        let (status, rate) = lock.withLock { ($0.machine.status, $0.machine.rate) }
        observers.update(playing: status == .playing, rate: rate)
    }

    // MARK: Machine

    private func handle(_ input: PlayerStateMachine.Input) {
        lock.withLock { s in enqueue(s.machine.handle(input), in: &s) }
    }

    /// Queues `actions` on the control queue. Lock held: batches run in the machine's order.
    private func enqueue(_ actions: [PlayerStateMachine.Action], in s: inout State) {
        guard !actions.isEmpty else { return }
        queue.async { [self] in for a in actions { perform(a) } }
    }

    /// Control queue: carries out one action.
    private func perform(_ action: PlayerStateMachine.Action) {
        switch action {
        case .openRuntime(let g, let seconds, let rate):
            // The picture is opened and its first frame decoded and shown while the output
            // connects (a sound server's handshake takes tens of milliseconds), not after it:
            // that frame is shown at once whatever the clock, the next ones against the sound
            // once it runs (the clock stands until then). Should the output fail, the second
            // reconciliation stops the picture again.
            lock.withLock { s in
                s.generationStart = seconds
                s.lastTime = seconds
            }
            reconcileVideo(outputOpening: true)
            openRuntime(generation: g, seconds: seconds, rate: rate)
            reconcileVideo()
        case .restartDecoding(let g, let seconds, let rate):
            let at = seconds ?? currentTime()
            guard let (rt, frame) = lock.withLock({ s -> (PlayerRuntime, AudioFramePosition)? in
                guard let rt = s.runtime else { return nil }
                let frame = AudioFramePosition((at * s.sampleRate).rounded())
                s.decodingGeneration = g
                s.generationStart = at
                s.lastTime = at
                s.videoLastTime = at
                if s.videoDrain != nil, let e = s.endEventAfterDrain {
                    queue.async { [self] in emitItemEvent(e) }  // reached before the seek
                }
                s.videoDrain = nil
                s.endEventAfterDrain = nil
                if seconds != nil {
                    s.readyForDisplay = false
                    s.video?.pipeline.seek(to: at, exact: s.seekExact)
                } else {
                    s.video?.pipeline.clockChanged()
                }
                return (rt, frame)
            }) else { return }
            // A seek (or a rate change, from the time heard) replaces what is heard: the output
            // drops what it holds, and the renderer switches inside that flush, so that nothing of
            // the new audio is lost. Outside the player's lock; the runtime stays until this
            // queue's own close.
            rt.driver.flush {
                rt.renderer.requestGeneration(g, startFrame: frame)
                rt.decoder.schedule(.init(generation: g, startFrame: frame, loops: 0, endFrame: nil, rate: Double(rate)))
            }
            reconcileVideo()
        case .startRendering:
            let failure: (TonearmError, any AudioOutputDriver)? = lock.withLock { s in
                guard let rt = s.runtime else { return nil }
                do { try rt.startRendering() } catch {
                    return ((error as? TonearmError) ?? .outputUnavailable(driver: rt.driver.name, reason: "\(error)"), rt.driver)
                }
                return nil
            }
            // The driver: a server that went away as the stream started is watched for.
            if let (error, driver) = failure { outputFailed(error, lost: driver) }
            lock.withLock { $0.video?.pipeline.clockChanged() }
        case .pauseRendering:
            lock.withLock { s in
                s.runtime?.pauseRendering()
                s.video?.pipeline.clockChanged()
            }
        case .drainOutput:
            startVideoDrain()
            if let rt = lock.withLock({ $0.runtime }) {
                rt.driver.drain(timeout: rt.driver.latency + rt.engine.tailTime + 1)
            }
        case .closeRuntime:
            let rt = lock.withLock { s -> PlayerRuntime? in
                defer { s.runtime = nil }
                return s.runtime
            }
            rt?.close()
            reconcileVideo()
        case .emitOutputLost(let awaiting):
            let reason = lock.withLock { $0.lastError.map { "\($0)" } } ?? "the output failed"
            broadcaster.yield(.outputLost(reason: reason, awaitingReturn: awaiting))
        case .emitOutputReturned(let resuming):
            broadcaster.yield(.outputReturned(resuming: resuming))
        case .emitStatus(let status):
            // The video clock's rate follows the status (0 unless playing): a presenter that saw
            // it stand (after a seek, while waiting to play) waits for an event, and its queue
            // may be full by then — nothing else would wake it.
            lock.withLock { $0.video?.pipeline.clockChanged() }
            registrar.withMutation(of: self, keyPath: \.timeControlStatus) {}
            broadcaster.yield(.timeControlStatusChanged(status))
            syncObservers()
        case .emitRate(let r):
            registrar.withMutation(of: self, keyPath: \.rate) {}
            broadcaster.yield(.rateChanged(r))
            syncObservers()
        case .emitStalled:
            currentItem?.noteStall()
            emitItemEvent(.playbackStalled)
        case .emitPlayedToEnd:
            drainVideo(then: .didPlayToEndTime)
        case .emitFailedToPlayToEnd:
            let e = lock.withLock { $0.decodeError } ?? .invalidState("the stream ended before its end")
            drainVideo(then: .failedToPlayToEndTime(e))
        case .markItemFailed:
            let (item, e) = lock.withLock { s in (s.item, s.decodeError ?? .invalidState("the stream ended before its end")) }
            item?.markFailed(e)
            failPendingSeeks()
            emitItemEvent(.itemStatusChanged(.failed(e)))
        case .evaluateBuffer:
            evaluateBuffer()
        case .retainSelf:
            lock.withLock { $0.keepAlive = self }
        case .releaseSelf:
            // Dropped on the control queue, outside the lock: it may be the last reference.
            let keep = lock.withLock { s -> Player? in
                defer { s.keepAlive = nil }
                return s.keepAlive
            }
            queue.async { _ = keep }
        }
    }

    private func openRuntime(generation g: UInt64, seconds: Double, rate: Float) {
        guard let item = currentItem, let source = item.playbackSource else {
            handle(.outputLost(at: seconds, watching: false))
            return
        }
        let sampleRate = source.sourceFormat.sampleRate
        let name = item.url.absoluteString
        let frame = AudioFramePosition((seconds * sampleRate).rounded())
        var made: (any AudioOutputDriver)?
        do {
            let driver = try makeOutput()
            made = driver
            let rt = PlayerRuntime(
                source: source, driver: driver, eq: eq,
                onWarnings: { [weak self] ws in
                    guard let self else { return }
                    queue.async { for w in ws { self.emitItemEvent(.decodeWarning(w)) } }
                },
                onError: { [weak self] e in
                    let te = (e as? TonearmError) ?? .decodeFailed(path: name, detail: "\(e)")
                    self?.lock.withLock { s in
                        s.decodeError = te
                        _ = s.machine.handle(.decodeFailed)
                    }
                },
                onPositioned: { [weak self] g in
                    guard let self else { return }
                    queue.async { self.positioned(generation: g) }
                })
            try lock.withLock { s in
                s.sampleRate = sampleRate
                s.decodingGeneration = g
                s.generationStart = seconds
                s.lastTime = seconds
                s.runtime = rt
                rt.renderer.commands.push(.gain(target: s.muted ? 0 : s.volume, frames: 0))
                try rt.prepare(request: .init(generation: g, startFrame: frame, loops: 0, endFrame: nil, rate: Double(rate)),
                               timeout: 0)
            }
            rt.startEventPump({ [weak self] e in self?.renderEvent(e) },
                              outputEvents: { [weak self] e in self?.outputEvent(e) })
        } catch {
            let rt = lock.withLock { s -> PlayerRuntime? in
                defer { s.runtime = nil }
                return s.runtime
            }
            rt?.close()
            // A server that answered and went away while the output opened is watched for.
            outputFailed((error as? TonearmError) ?? .outputUnavailable(driver: "output", reason: "\(error)"), lost: made)
        }
    }

    /// The output could not be started, or `lost` (the driver in use) reported it gone: when
    /// that driver can watch for its server to come back, the player waits for it.
    private func outputFailed(_ error: TonearmError, lost: (any AudioOutputDriver)? = nil) {
        let at = currentTime()
        lock.withLock { s in
            s.lastError = error
            // The watch's report takes the lock: it is handled after this loss. A driver that
            // never reached its server has nothing to watch: a watch already running goes on.
            if let w = lost?.watchForReturn({ [weak self] in self?.outputReturned() }) {
                s.outputWatch?.cancel()
                s.outputWatch = w
            }
            enqueue(s.machine.handle(.outputLost(at: at, watching: s.outputWatch != nil)), in: &s)
        }
        failPendingSeeks()
    }

    /// The watch's thread: the lost output answers again.
    private func outputReturned() {
        lock.withLock { s in
            s.outputWatch = nil
            enqueue(s.machine.handle(.outputReturned), in: &s)
        }
    }

    /// Seeks that can no longer land complete with false.
    private func failPendingSeeks() {
        let seeks = lock.withLock { s -> [PendingSeek] in
            defer { s.seeks.removeAll() }
            return s.seeks
        }
        for seek in seeks { seek.completion(false) }
    }

    /// Decoder thread → control queue: generation `g` is positioned in the source (a seek landed).
    private func positioned(generation g: UInt64) {
        let (done, keep) = lock.withLock { s -> ([PendingSeek], Bool) in
            let done = s.seeks.filter { $0.generation <= g }
            s.seeks.removeAll { $0.generation <= g }
            return (done, g == s.decodingGeneration)
        }
        guard keep || !done.isEmpty else { return }
        for seek in done {
            broadcaster.yield(.seeked(to: seek.target))
            seek.completion(true)
        }
        if !done.isEmpty { observers.jumped() }
    }

    private func emitItemEvent(_ e: PlayerEvent) {
        if case .readyForDisplay = e { registrar.withMutation(of: self, keyPath: \.isReadyForDisplay) {} }
        currentItem?.broadcast(e)
        broadcaster.yield(e)
    }

    // MARK: Signals

    private func renderEvent(_ e: RenderEvent) {
        switch e {
        case .ended(let g): handle(.reachedEnd(generation: g))
        // The sound ran dry: a stall only when the sound's own buffer does not keep up (the
        // picture's is waited for before playing, not at every seek's empty queue).
        case .starved(let g): handle(.starved(generation: g, keepsUp: currentItem?.soundIsLikelyToKeepUp ?? false))
        case .itemEnded: break
        }
    }

    private func outputEvent(_ e: AudioOutputEvent) {
        switch e {
        case .corkRequested, .deviceRemoved:
            // Another stream took the output, or the headphones went away: pause, do not go on
            // out of the speakers.
            handle(.pause)
        case .uncorkRequested:
            break
        case .deviceLost(let reason):
            let driver = lock.withLock { $0.runtime?.driver }
            outputFailed(.outputUnavailable(driver: outputName ?? "output", reason: reason), lost: driver)
        case .drained, .moved, .bufferChanged:
            break
        }
    }

    /// Fetch or loader thread: something happened to the item.
    private func itemSignal(_ signal: PlayerItem.Signal, epoch: UInt64) {
        guard lock.withLock({ $0.itemEpoch == epoch }) else { return }
        switch signal {
        case .ready:
            // The status event first, then what the machine does about it (in one lock, so a
            // buffer evaluation cannot slip in between).
            lock.withLock { s in
                queue.async { [self] in emitItemEvent(.itemStatusChanged(.readyToPlay)) }
                enqueue(s.machine.handle(.itemReady), in: &s)
            }
        case .failed(let e):
            lock.withLock { s in
                queue.async { [self] in emitItemEvent(.itemStatusChanged(.failed(e))) }
                enqueue(s.machine.handle(.itemFailed), in: &s)
            }
            failPendingSeeks()
        case .loaded:
            requestBufferEvaluation { s in s.itemEpoch == epoch }
        case .metadata(let fields):
            // Heard when the audio that came with it plays: after what is buffered ahead.
            let delay = min(30, max(0, (currentItem?.bufferedSecondsAhead ?? 0) / Double(max(0.25, rate == 0 ? 1 : rate))))
            queue.asyncAfter(deadline: .now() + (delay.isFinite ? delay : 0)) { [weak self] in
                guard let self, lock.withLock({ $0.itemEpoch == epoch }) else { return }
                currentItem?.setTimedMetadata(fields)
                emitItemEvent(.timedMetadata(fields))
            }
        case .accessEntry(let entry):
            queue.async { [self] in emitItemEvent(.newAccessLogEntry(entry)) }
        case .errorEntry(let entry):
            queue.async { [self] in emitItemEvent(.newErrorLogEntry(entry)) }
        case .videoOutputsChanged:
            queue.async { [self] in reconcileVideo() }
        }
    }

    /// Any thread (bytes arrived, the picture's queue filled): queues a measurement of the buffer
    /// when the machine waits for one and `still(state)` holds. Queued under the lock, as the
    /// machine's own actions are, so it runs after every batch the machine asked for before it:
    /// an item that became ready has its runtime and its video open by then. (Checked when it ran
    /// instead, a measurement queued before the item's `openRuntime` could run between the
    /// machine's `itemReady` and that action, count the sound alone and start the player with
    /// no frame of a picture that stalls — PlayerNetworkVideoTests, 1 run in 8.)
    private func requestBufferEvaluation(_ still: (borrowing State) -> Bool) {
        lock.withLock { s in
            guard s.machine.needsBufferEvaluation, still(s) else { return }
            enqueue([.evaluateBuffer], in: &s)
        }
    }

    /// Control queue: measures the buffer and tells the machine whether playback is likely to
    /// keep up. Only there: the video pipeline that the measurement counts is made and replaced
    /// on that queue.
    private func evaluateBuffer() {
        guard let item = currentItem else { return }
        handle(.bufferEvaluated(keepsUp: item.isPlaybackLikelyToKeepUp))
    }
}

// MARK: Video

extension Player {
    /// Registers a renderer for the video (a window's layer, say): it is shown each frame of
    /// the current item's video when due. While renderers or item outputs are attached the
    /// video is decoded; otherwise not at all.
    ///
    /// A picture already running in the renderer's format hands it its next frame at once (the
    /// control queue may be busy opening the sound's output meanwhile); anything else is
    /// reconciled on the control queue.
    public func addVideoRenderer(_ renderer: any PlayerVideoRenderer) {
        lock.withLock { s in
            guard !s.renderers.contains(where: { $0 === renderer }) else { return }
            s.renderers.append(renderer)
            Self.retargetVideo(&s)
        }
        queue.async { [self] in reconcileVideo() }
    }

    /// Stops showing the video to `renderer` (from the next frame when the picture runs; see
    /// ``addVideoRenderer(_:)``).
    public func removeVideoRenderer(_ renderer: any PlayerVideoRenderer) {
        lock.withLock { s in
            s.renderers.removeAll { $0 === renderer }
            Self.retargetVideo(&s)
        }
        queue.async { [self] in reconcileVideo() }
    }

    /// The pixel format a picture is decoded in for `sinks`: `rgba` when all of them want it,
    /// else `yuv420p` (converted for the `rgba` ones).
    static func videoFormat(for sinks: [any PlayerVideoRenderer]) -> VideoFrame.PixelFormat {
        !sinks.isEmpty && sinks.allSatisfy({ $0.preferredPixelFormat == .rgba }) ? .rgba : .yuv420p
    }

    /// Lock held: the running picture of the current item shows its frames to the renderers of
    /// now (and the item's outputs it was reconciled with) when they still want its format;
    /// otherwise the control queue's reconciliation restarts or stops it.
    private static func retargetVideo(_ s: inout State) {
        guard let run = s.video, run.epoch == s.itemEpoch else { return }
        let sinks = run.outputs + s.renderers
        guard !sinks.isEmpty, videoFormat(for: sinks) == run.format else { return }
        run.fanout.set(sinks)
    }

    /// Whether the frame for the current position has been shown since the item started or
    /// the last seek (`AVPlayerLayer.isReadyForDisplay`; ``PlayerEvent/readyForDisplay(time:)``
    /// says when it becomes true).
    public var isReadyForDisplay: Bool {
        registrar.access(self, keyPath: \.isReadyForDisplay)
        return lock.withLock { $0.readyForDisplay }
    }

    /// Whether a video pipeline runs for the current item.
    public var isPlayingVideo: Bool { lock.withLock { $0.video != nil } }

    /// Frames presented and dropped and the last A−V difference (seconds; positive: the picture
    /// is late) of the current item's video: while it plays, or as it was when it stopped (the
    /// end); nil when no video played for the item.
    public var videoStatistics: VideoPipelineStatistics? {
        lock.withLock { $0.video?.pipeline.statistics ?? $0.stoppedVideoStatistics }
    }

    /// The master clock of the video: the audio at the speaker. The position moves once per
    /// render call; the output's latency at the instant it describes (``OutputClockReading``: a
    /// PulseAudio timing update between two render calls has its own) is taken off it, and the
    /// result extrapolated at the rate from that instant — never beyond what was rendered and
    /// never backwards.
    func videoClock() -> VideoClockReading {
        let now = DispatchTime.now().uptimeNanoseconds
        return lock.withLock { s in
            if let d = s.videoDrain {
                // The rate stays: a paused clock presents nothing, and the last frames are due.
                let t = min(d.until, d.time + Double(now > d.host ? now - d.host : 0) / 1e9 * d.rate)
                return VideoClockReading(time: t, rate: d.rate)
            }
            let rate = s.machine.status == .playing ? Double(s.machine.rate) : 0
            guard let rt = s.runtime, s.machine.runtimeOpen else {
                return VideoClockReading(time: max(s.generationStart, s.videoLastTime), rate: 0)
            }
            guard rt.renderer.positionGeneration.load(ordering: .acquiring) == s.decodingGeneration else {
                // Playing, but nothing of this generation rendered yet: the clock stands where
                // the generation starts — at the rate it is about to move, so that a presenter
                // reading it now waits for its next frame's time and reads it again, rather than
                // for an event (the render thread's first block raises none: a presenter that
                // saw rate 0 here with a full queue waited until the sound's end).
                return VideoClockReading(time: max(s.generationStart, s.videoLastTime), rate: rate)
            }
            let host = rt.renderer.positionHostNanos.load(ordering: .acquiring)
            let rendered = Double(rt.renderer.positionFrame.load(ordering: .relaxed)) / s.sampleRate
            // After the position: the output raises its latency before the renderer moves it.
            // `now` after the reading, whose instant may be later than the one above.
            let reading = rt.driver.clockReading
            var heard = reading.heard(rendered: rendered, renderHost: host, latencyScale: Double(s.machine.decodingRate),
                                      rate: rate, now: DispatchTime.now().uptimeNanoseconds)
            heard = max(min(heard, rendered), s.generationStart, s.videoLastTime)
            s.videoLastTime = heard
            return VideoClockReading(time: heard, rate: rate)
        }
    }

    /// Control queue: the sound's end was rendered; the output still holds what was rendered
    /// last (PulseAudio is drained next; the null output does not drain). Meanwhile the player
    /// is no longer "playing", so the picture's clock runs on the host's clock from where the
    /// sound was heard to the end of what was rendered (at the rate), and the pipeline goes on
    /// presenting. Idempotent.
    private func startVideoDrain() {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { s in
            guard s.video != nil, s.videoDrain == nil, let rt = s.runtime else { return }
            let until = Double(rt.renderer.positionFrame.load(ordering: .relaxed)) / s.sampleRate
            s.videoDrain = (min(until, s.videoLastTime), now, until, Double(s.machine.decodingRate))
            s.video?.pipeline.clockChanged()
        }
    }

    /// Control queue: the end was reached (and heard, when the output drains). `event` is
    /// reported once the picture has reached the end too: when the pipeline has presented
    /// everything, or at the end of the sound at the latest; then the pipeline stops.
    private func drainVideo(then event: PlayerEvent) {
        startVideoDrain()
        let now = DispatchTime.now().uptimeNanoseconds
        let drain = lock.withLock { s -> (host: UInt64, remaining: Double)? in
            guard let d = s.videoDrain else { return nil }
            s.endEventAfterDrain = event
            let elapsed = Double(now > d.host ? now - d.host : 0) / 1e9
            return (d.host, max(0, (d.until - d.time) / max(d.rate, 0.01) - elapsed))
        }
        guard let drain else {
            reconcileVideo()
            return emitItemEvent(event)
        }
        queue.asyncAfter(deadline: .now() + drain.remaining + 0.1) { [weak self] in
            self?.endDrain(startedAt: drain.host)
        }
    }

    /// Control queue: the drain is over (the pipeline showed everything, or the sound's end
    /// passed): the pipeline stops and the end, if reached meanwhile, is reported. `startedAt`:
    /// only that drain (nil: whichever runs).
    private func endDrain(startedAt host: UInt64?) {
        let (draining, event) = lock.withLock { s -> (Bool, PlayerEvent?) in
            guard let d = s.videoDrain, host == nil || d.host == host else { return (false, nil) }
            s.videoDrain = nil
            defer { s.endEventAfterDrain = nil }
            return (true, s.endEventAfterDrain)
        }
        guard draining else { return }
        reconcileVideo()
        if let event { emitItemEvent(event) }
    }

    /// How far the picture's decoder is ahead, while the item of `epoch` has its video decoded.
    func videoBufferLevel(epoch: UInt64) -> VideoBufferLevel? {
        let pipeline = lock.withLock { s in s.itemEpoch == epoch && s.video?.epoch == epoch ? s.video?.pipeline : nil }
        return pipeline?.bufferLevel
    }

    /// Control queue: starts the video pipeline when the item has video, an output or renderer
    /// wants it and the audio runtime is open (or, with `outputOpening`, about to be opened:
    /// the machine has asked for it and the control queue is opening it now); stops it
    /// otherwise (a new item, the end, a lost output). The decoder is opened on the pipeline's
    /// decoding thread, never here nor under the lock.
    func reconcileVideo(outputOpening: Bool = false) {
        let (item, open, current, epoch, renderers, atEnd) = lock.withLock { s in
            (s.item, s.machine.runtimeOpen && (s.runtime != nil || outputOpening), s.video, s.itemEpoch, s.renderers,
             s.machine.atEnd && s.videoDrain == nil)
        }
        let outputs = item?.outputs ?? []
        let sinks: [any PlayerVideoRenderer] = outputs + renderers
        let format = Self.videoFormat(for: sinks)
        var wanted = false
        if let item, open, !atEnd, !sinks.isEmpty, item.url.isFileURL || item.isProgressiveHTTP || item.isHLS,
           item.selectedVideoTrack != nil {
            wanted = true
        }
        if let current {
            if wanted && current.epoch == epoch && current.format == format {
                lock.withLock { s in
                    guard s.video?.pipeline === current.pipeline else { return }
                    s.video?.outputs = outputs
                    current.fanout.set(outputs + s.renderers)  // the renderers of now, under the lock
                }
                return
            }
            current.stop()
            let waiting = lock.withLock { s -> Bool in
                s.video = nil
                s.readyForDisplay = false
                s.stoppedVideoStatistics = current.epoch == s.itemEpoch ? current.pipeline.statistics : nil
                return s.machine.needsBufferEvaluation
            }
            // Waiting for the buffer: the picture no longer counts.
            if waiting { evaluateBuffer() }
        }
        guard wanted, let item else { return }
        let at = currentTime()
        let frames: any VideoFrameSource
        var cancelNetwork: (@Sendable () -> Void)?
        if item.isHLS {
            // An HLS stream's picture reads the sound's segments with a reader of its own, opened
            // on the decoding thread (see HLSVideoFrameSource).
            let source = HLSVideoFrameSource(item: item, format: format, startTime: at)
            cancelNetwork = { source.cancel() }
            frames = source
        } else if item.url.isFileURL {
            // Opened on the decoding thread at its first frame, as a network item's: opening
            // (the demuxer's probe and the decoder's start, tens of milliseconds at 1080p) does
            // not hold up the control queue, which starts the sound meanwhile. A failure to open
            // fails the pipeline: ``PlayerEvent/videoFailed(_:)`` as before.
            let path = item.url.path
            frames = DecoderFrameSource(subtitles: item.subtitleChoice, opening: { () throws(TonearmError) -> VideoDecoder in
                try VideoDecoder(path: path, track: nil, outputFormat: format)
            })
        } else {
            // Over HTTP the video reads the item's download with a reader of its own (the
            // audio's demuxer moves the position of the item's reader as it reads): the file is
            // fetched once. Opened on the decoding thread: the moov atom may come only at the end
            // of the file. Cancelled before the pipeline stops (`VideoRun.stop()`), which wakes a
            // read waiting for bytes (and ends this reader only).
            let source = item.makeNetworkReader() ?? NetworkByteSource(url: item.url, options: item.networkOptions)
            cancelNetwork = { source.cancel() }
            let name = item.url.absoluteString
            frames = DecoderFrameSource(subtitles: item.subtitleChoice, opening: { () throws(TonearmError) -> VideoDecoder in
                source.start()
                return try VideoDecoder(byteSource: source, name: name, track: nil, outputFormat: format)
            })
        }
        let fanout = VideoFanout()
        fanout.set(sinks)
        let box = WeakPlayer()
        box.player = self
        let pipeline = VideoPipeline(source: frames, sink: fanout,
                                     clock: { box.player?.videoClock() ?? VideoClockReading(time: 0, rate: 0) })
        let stored = lock.withLock { s -> Bool in
            guard s.itemEpoch == epoch, s.video == nil else { return false }
            s.stoppedVideoStatistics = nil
            s.video = VideoRun(pipeline: pipeline, fanout: fanout, epoch: epoch, format: format, outputs: outputs,
                               cancelNetwork: cancelNetwork)
            fanout.set(outputs + s.renderers)  // a renderer added or removed since the read above
            return true
        }
        guard stored else { cancelNetwork?(); return }
        let events = pipeline.events
        Task { [weak self] in
            for await e in events {
                guard let self else { return }
                switch e {
                case .readyForDisplay(let t):
                    let current = lock.withLock { s -> Bool in
                        guard s.video?.pipeline === pipeline else { return false }
                        s.readyForDisplay = true
                        return true
                    }
                    if current { queue.async { self.emitItemEvent(.readyForDisplay(time: t)) } }
                case .failed(let error):
                    queue.async { self.emitItemEvent(.videoFailed(error)) }
                case .buffered:
                    // The picture keeps up again: a player waiting for the buffer measures it.
                    item.bufferChanged()
                    requestBufferEvaluation { s in s.video?.pipeline === pipeline }
                case .shapeChanged(let shape):
                    // A picture of another size is on screen (the first; an HLS variant): the
                    // item's track follows it, and observers hear of it.
                    if lock.withLock({ $0.video?.pipeline === pipeline }), let size = item.pictureShown(shape: shape) {
                        queue.async { self.emitItemEvent(.presentationSizeChanged(size)) }
                    }
                case .ended:
                    // Every frame was shown: a drain after the sound's end is over.
                    if lock.withLock({ $0.video?.pipeline === pipeline }) {
                        queue.async { self.endDrain(startedAt: nil) }
                    }
                }
            }
        }
        pipeline.start()
        if at > 0 { pipeline.seek(to: at, exact: true) }
    }
}

/// A weak reference for closures made before `self` exists.
private final class WeakPlayer: @unchecked Sendable {
    weak var player: Player?
}
