// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import Tonearm
import TonearmWindow

/// The picture of the videos in a `tonearm play` queue (`tonearm play a.flac clip.mp4 b.flac`):
/// when a video item becomes current its frames are decoded on a ``VideoPipeline`` of their own
/// and presented against the queue's audio clock (the sound heard, ``QueuePlayer/currentTime``),
/// to a window, to nothing (`--video-output null`) or to one YUV4MPEG2 file (`file:`, the frames
/// of every video item shown, in order). The songs in between are not touched: their sound goes
/// through the same gapless queue, and nothing about video is opened for them.
///
/// The window (as mpv does without `--force-window`): it opens when a video item becomes
/// current, at the video's size and titled with its name; a video that follows a video keeps it
/// (title and size change); a song that follows closes it, so that no empty window stands in
/// front of the desktop while the songs play (the terminal is their screen), and the next video
/// opens one again. Its keys act on the queue as the terminal's do (space, ←/→, ↑/↓, m, through
/// the `[keys]` bindings), f toggles full screen, and q, Esc or closing the window end the run, as
/// they do for one video (mpv quits its whole playlist when its window is closed;
/// AVPlayerViewController's dismissal stops its player). It has `PlayerView`'s built-in controls
/// (play/pause, the seek bar, elapsed and remaining time, the volume) drawn from the queue: they
/// show on a mouse movement or a key, are kept current while they show (not after they hid), and
/// a click on them plays, pauses or seeks the queue's item (``SessionEvent/videoControl(_:)``).
///
/// Threading: the methods are called from the session's loop, one at a time. The clock closure
/// runs on the pipeline's presenting thread; the window opens and is answered on tasks of its
/// own, and what it reports comes back to the session as ``SessionEvent``s.
final class QueueVideo: @unchecked Sendable {
    /// What `tonearm play` asks of a queue's videos.
    struct Request: Sendable, Hashable {
        var output: VideoOutputChoice
        var fullScreen: Bool
        /// `--sub-track`: the text track each video draws when it has that many.
        var subtitleTrack: Int? = nil
    }

    /// The master clock of the item's picture: the queue's sound heard, ``QueuePlayer/clockReading``
    /// — the time heard at the instant the output's latency describes, moved on at the speed
    /// from that instant, never past what was rendered and never backwards (but by a seek). The
    /// queue's clock is the one clock: nothing here extrapolates from a wall clock of its own
    /// but the drain. Once the queue has moved to another item the clock goes on from where it
    /// was to the item's end on the host's clock (what the output still held of it is heard).
    final class ClockState: Sendable {
        struct Track {
            /// The speed the queue plays at (the time-pitch's rate).
            var speed = 1.0
            /// The last time reported, and the host time it was.
            var last = 0.0
            var lastHost: UInt64 = 0
            /// The item's length: after the queue has moved on, the picture plays on to it on
            /// the host's clock (what the output still held of the item's sound is being heard).
            var until = 0.0
        }

        let track = Mutex(Track())

        func reset(to time: Double, until: Double? = nil) {
            track.withLock { t in
                t.last = time
                t.lastHost = DispatchTime.now().uptimeNanoseconds
                if let until { t.until = until }
            }
        }

        /// The seconds left of the item after the last reading, at the speed.
        var remaining: Double { track.withLock { t in max(0, t.until - t.last) / max(0.25, t.speed) } }

        /// The item's clock from a reading of the queue's (`reading`: nil once the queue has
        /// moved to another item), at host time `now`.
        func read(reading: PlaybackClockReading?, playing: Bool, now: UInt64) -> VideoClockReading {
            track.withLock { t in
                let rate = playing ? t.speed : 0
                guard let reading else {
                    // The drain: on to the item's end on the host's clock.
                    if rate > 0 && now > t.lastHost { t.last = min(max(t.last, t.until), t.last + Double(now - t.lastHost) / 1e9 * rate) }
                    t.lastHost = now
                    return VideoClockReading(time: t.last, rate: rate)
                }
                let heard = max(reading.time(at: now, rate: rate), t.last)
                t.last = heard
                t.lastHost = now
                return VideoClockReading(time: heard, rate: rate)
            }
        }

        func read(queue: QueuePlayer, key: UInt64) -> VideoClockReading {
            let playing = queue.playbackState == .playing
            let current = queue.currentItem?.persistentID == key
            let reading = current ? queue.clockReading : nil
            // `now` after the reading: its instant may be later than a `now` taken before.
            return read(reading: reading, playing: playing, now: DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// The window (once open), whether one is wanted now (a video item is current), and whether
    /// one is being opened; `over` once the session ends.
    private struct WindowState {
        var window: VideoWindow?
        var wanted = false
        var opening = false
        var over = false
        /// The window could not open: said once, the sound plays, no other window is tried.
        var failed = false
        /// The title and size of the item now current (for a window that opens after it changed).
        var title = ""
        var size = VideoSize(width: 640, height: 360)
    }

    /// The window's sink: hands each frame to the window of the moment (none between windows).
    private final class WindowSink: VideoFrameSink {
        private let window = Mutex<VideoWindow?>(nil)
        func set(_ w: VideoWindow?) { window.withLock { $0 = w } }
        func show(_ frame: VideoFrame) {
            guard let w = window.withLock({ $0 }) else { return }
            _ = try? w.show(frame)
        }
    }

    let request: Request
    /// The subtitles of the video now current (`j` in the window steps through them).
    private let subtitles: QueueSubtitles
    private let queue: QueuePlayer
    private let continuation: AsyncStream<SessionEvent>.Continuation
    /// The window's state, shared with the task that opens and answers it.
    private final class WindowBox: Sendable {
        let state = Mutex(WindowState())
        func withLock<T>(_ body: (inout WindowState) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let windowState = WindowBox()
    private let windowSink = WindowSink()
    private var null: NullVideoRenderer?
    private var y4m: Y4MVideoRenderer?
    private var y4mFailed = false
    /// The pipelines: the one of the video item that is current (and its item's persistent ID),
    /// the one of the item before while it plays out its last frames (``Drain``), and the
    /// counts of those stopped. Shared with the drain's timer.
    private struct Pipelines {
        var running: (key: UInt64, pipeline: VideoPipeline, clock: ClockState)?
        var draining: (pipeline: VideoPipeline, token: UInt64)?
        var drains: UInt64 = 0
        var totals = Counts()
    }

    private final class PipelineBox: Sendable {
        let state = Mutex(Pipelines())
        func withLock<T>(_ body: (inout Pipelines) -> T) -> T { state.withLock { body(&$0) } }
    }

    private let pipelines = PipelineBox()
    /// Whether a path holds video, by path (probed once).
    private var isVideo: [String: Bool] = [:]
    /// What the picture of a queue's videos did: frames shown and dropped (all the video items
    /// so far) and the last A−V difference (seconds; positive: the picture is late).
    struct Counts: Sendable, Hashable {
        var presented = 0
        var dropped = 0
        var lastAVDifference: Double?

        mutating func add(_ s: VideoPipelineStatistics) {
            presented += s.presentedFrames
            dropped += s.droppedFrames
            lastAVDifference = s.lastAVDifference ?? lastAVDifference
        }

        /// What the plain progress line says of it, as mpv's status line does: `, A-V: +0.003, dropped: 2`.
        var status: String {
            let av = lastAVDifference.map { String(format: ", A-V: %+.3f", $0) } ?? ""
            return "\(av), dropped: \(dropped)"
        }

        /// The summary line: `Video: 50 frames shown, 0 dropped, A-V: +0.000`.
        var summary: String {
            let av = lastAVDifference.map { String(format: ", A-V: %+.3f", $0) } ?? ""
            return "Video: \(presented) frames shown, \(dropped) dropped\(av)"
        }
    }

    /// Whether any video item played its picture.
    private(set) var playedAny = false

    init(request: Request, queue: QueuePlayer, continuation: AsyncStream<SessionEvent>.Continuation) {
        self.request = request
        subtitles = QueueSubtitles(track: request.subtitleTrack)
        self.queue = queue
        self.continuation = continuation
    }

    /// The window's built-in controls drawn from the queue as it is now (the volume the queue
    /// plays at; the session mutes by setting it to 0).
    static func controlsState(of queue: QueuePlayer) -> ControlsState {
        let volume = Double(queue.volume)
        return ControlsState(isPlaying: queue.playbackState == .playing, currentTime: queue.currentTime,
                             duration: queue.currentDuration, volume: volume, isMuted: volume == 0)
    }

    /// How often the controls are redrawn from the queue while they show.
    static let controlsRefreshInterval = 0.25

    /// The speed of the queue (`--rate`, `[`/`]`), for the clock's extrapolation.
    func setSpeed(_ rate: Float) {
        speed = Double(rate)
        let clock = pipelines.withLock { $0.running?.clock }
        clock?.track.withLock { $0.speed = Double(rate) }
    }

    /// The queue's speed (`--rate`), for the clocks.
    private var speed = 1.0

    /// Whether `item` is a local file with a video track (probed once per path).
    func hasVideo(_ item: QueueItem) -> Bool {
        guard !item.isRemote else { return false }
        if let known = isVideo[item.path] { return known }
        let v = VideoPlayback.hasVideo(item.path)
        isVideo[item.path] = v
        return v
    }

    /// Session loop: `item` became current (announced). A video item gets its picture, from where
    /// its sound is; anything else stops the picture (and closes the window).
    func itemBecameCurrent(_ item: QueueItem?) {
        guard let item, hasVideo(item) else {
            // The video before plays out what the output still held of it; then its window closes.
            drainPipeline()
            return
        }
        stopPipelines()
        let decoder: VideoDecoder
        do {
            decoder = try VideoDecoder(path: item.path)
        } catch {
            continuation.yield(.videoNote("\(error): playing its sound only"))
            closeWindow()
            return
        }
        guard let sink = sink(for: decoder.track, name: item.url.lastPathComponent) else { return }
        let key = item.persistentID
        let queue = self.queue, state = ClockState()
        state.track.withLock { $0.speed = speed }
        let at = queue.currentTime
        state.reset(to: at, until: queue.currentDuration ?? decoder.track.duration ?? 0)
        let clock: VideoPipeline.Clock = { state.read(queue: queue, key: key) }
        let source = QueueFrameSource(decoder: decoder, subtitles: subtitles.begin(item.path))
        let pipeline = VideoPipeline(source: source, sink: sink, clock: clock)
        let cont = continuation
        let events = pipeline.events
        Task {
            for await e in events {
                if case .failed(let error) = e { cont.yield(.videoNote("\(error): the picture stops here")) }
            }
        }
        pipelines.withLock { $0.running = (key, pipeline, state) }
        playedAny = true
        pipeline.start()
        if at > 0 { pipeline.seek(to: at, exact: true) }
    }

    /// Session loop: the queue paused, played or changed speed: the presenter decides again.
    func clockChanged() {
        let (a, b) = pipelines.withLock { ($0.running?.pipeline, $0.draining?.pipeline) }
        a?.clockChanged()
        b?.clockChanged()
    }

    /// Session loop: the queue seeked within the current item.
    func seeked(to seconds: Double) {
        guard let running = pipelines.withLock({ $0.running }) else { return }
        running.clock.reset(to: seconds)
        running.pipeline.seek(to: seconds, exact: true)
    }

    /// The counts of the picture so far (the pipelines stopped and the one running); nil when no
    /// video item has played its picture.
    var statistics: Counts? {
        guard playedAny else { return nil }
        let (totals, now, draining) = pipelines.withLock { ($0.totals, $0.running?.pipeline, $0.draining?.pipeline) }
        var s = totals
        if let draining { s.add(draining.statistics) }
        if let now { s.add(now.statistics) }
        return s
    }

    /// Whether the item now current plays its picture.
    var isShowing: Bool { pipelines.withLock { $0.running != nil } }

    /// The frames written to the `file:` output so far.
    var framesWritten: Int? { y4m?.framesWritten }

    /// Session end: stops the picture, closes the window and the file (its first error, if any).
    func finish() -> TonearmError? {
        stopPipelines()
        let w = windowState.withLock { s -> VideoWindow? in
            s.over = true
            s.wanted = false
            defer { s.window = nil }
            return s.window
        }
        windowSink.set(nil)
        w?.close()
        return y4m?.finish()
    }

    // MARK: Parts

    /// Stops the picture now: the current item's and a drain's.
    private func stopPipelines() {
        let (a, b) = pipelines.withLock { p in
            defer { (p.running, p.draining) = (nil, nil) }
            return (p.running?.pipeline, p.draining?.pipeline)
        }
        for pipeline in [b, a].compactMap({ $0 }) {
            pipeline.stop()
            let s = pipeline.statistics
            pipelines.withLock { $0.totals.add(s) }
        }
    }

    /// A song is current: the video before it (if any) presents its last frames against the
    /// sound the output still held of it — on the host's clock, to the item's end or at most
    /// as long as that lasts — then stops, and the window closes unless a video is current again.
    private func drainPipeline() {
        windowState.withLock { $0.wanted = false }
        let retired = pipelines.withLock { p -> (VideoPipeline, ClockState, UInt64)? in
            guard let r = p.running else { return nil }
            p.running = nil
            p.drains += 1
            p.draining = (r.pipeline, p.drains)
            return (r.pipeline, r.clock, p.drains)
        }
        guard let (pipeline, clock, token) = retired else {
            closeWindow()
            return
        }
        pipeline.clockChanged()
        let box = pipelines
        let end: @Sendable () -> Void = { [weak self] in
            let stopped = box.withLock { p -> VideoPipeline? in
                guard let d = p.draining, d.token == token else { return nil }
                p.draining = nil
                return d.pipeline
            }
            guard let stopped else { return }
            stopped.stop()
            let s = stopped.statistics
            box.withLock { $0.totals.add(s) }
            self?.closeWindowIfUnwanted()
        }
        let events = pipeline.events
        // At the end of its frames, or once the item's sound has been heard to its end.
        Task { for await e in events where e == .ended { end(); return } }
        DispatchQueue.global().asyncAfter(deadline: .now() + min(2, clock.remaining) + 0.1, execute: end)
    }

    /// Where this video item's frames go; nil when nowhere (the file failed).
    private func sink(for track: VideoTrackInfo, name: String) -> (any VideoFrameSink)? {
        switch request.output {
        case .null:
            let r = null ?? NullVideoRenderer()
            null = r
            return r
        case .file(let path):
            if let y4m { return y4m }
            guard !y4mFailed else { return nil }
            do {
                let r = try Y4MVideoRenderer(path: path, frameRate: (track.frameRateNumerator ?? 25, track.frameRateDenominator ?? 1))
                y4m = r
                return r
            } catch {
                y4mFailed = true
                continuation.yield(.videoNote("\(error): playing the sound only"))
                return nil
            }
        case .window:
            showWindow(title: name, size: VideoSize(width: track.displayWidth, height: track.displayHeight))
            return windowSink
        }
    }

    /// A video item is current: the window there is kept (retitled and resized to it), or one
    /// opens (off the session's loop: SDL starts in a moment, and the frames wait for nobody).
    private func showWindow(title: String, size: VideoSize) {
        enum Step { case none, update(VideoWindow), open }
        let step = windowState.withLock { s -> Step in
            s.wanted = true
            s.title = title
            s.size = size
            if let w = s.window { return .update(w) }
            if s.opening || s.failed || s.over { return .none }
            s.opening = true
            return .open
        }
        switch step {
        case .none:
            break
        case .update(let w):
            w.setTitle(title)
            if !request.fullScreen && !w.isFullScreen { w.setSize(width: size.width, height: size.height) }
        case .open:
            openWindow(title: title, size: size)
        }
    }

    /// A song is current (or the picture failed): the window closes (by the session, so the run
    /// goes on); a window still opening is closed once open.
    private func closeWindow() {
        let w = windowState.withLock { s -> VideoWindow? in
            s.wanted = false
            defer { s.window = nil }
            return s.window
        }
        windowSink.set(nil)
        w?.close()
    }

    /// After a drain: the window closes unless a video item became current meanwhile.
    private func closeWindowIfUnwanted() {
        let w = windowState.withLock { s -> VideoWindow? in
            guard !s.wanted else { return nil }
            defer { s.window = nil }
            return s.window
        }
        guard let w else { return }
        windowSink.set(nil)
        w.close()
    }

    private func openWindow(title: String, size: VideoSize) {
        let config = VideoWindow.Configuration(title: title, width: size.width, height: size.height,
                                               fullScreen: request.fullScreen, fitsScreen: true)
        let box = windowState, sink = windowSink, cont = continuation, subtitles = subtitles
        Task.detached {
            let window: VideoWindow
            do {
                window = try VideoWindow(config)
            } catch {
                box.withLock { s in
                    s.opening = false
                    s.failed = true
                }
                cont.yield(.videoWindowClosed(problem: "\(error)"))
                return
            }
            // Kept when a video is still current; its title and size follow what changed meanwhile.
            let kept = box.withLock { s -> (String, VideoSize)? in
                s.opening = false
                guard s.wanted, !s.over else { return nil }
                s.window = window
                return (s.title, s.size)
            }
            guard let (nowTitle, nowSize) = kept else {
                window.close()
                return
            }
            if nowTitle != title { window.setTitle(nowTitle) }
            if nowSize != size && !config.fullScreen { window.setSize(width: nowSize.width, height: nowSize.height) }
            sink.set(window)
            // The built-in controls: there from the start (so the window shows them on the first
            // movement by itself), fed from the queue by the window while they show.
            let queue = self.queue
            window.setControls(Self.controlsState(of: queue))
            window.feedControls(every: Self.controlsRefreshInterval) { Self.controlsState(of: queue) }
            // Said (a plain line, or the screen's message) when the picture is on screen, and how big.
            let note = Thread {
                guard let p = window.waitForPresentation(timeout: 60, where: { $0.frameTime != nil }) else { return }
                cont.yield(.videoNote("Video: the first frame shown in a window of \(p.outputWidth)×\(p.outputHeight)"))
            }
            note.start()
            loop: for await event in window.events {
                switch event {
                case .key(.q, _), .key(.escape, _):
                    window.close()  // then .closed
                case .key(.f, _):
                    window.setFullScreen(!window.isFullScreen)
                case .key(.j, let isRepeat):
                    // The next subtitle (mpv's j); a held key steps once.
                    if !isRepeat, let note = subtitles.cycle() { cont.yield(.videoNote(note)) }
                case .key(let k, _):
                    // The terminal's names for these keys: what they do comes from the bindings.
                    cont.yield(.keyName(k.rawValue))
                case .controls(let action):
                    cont.yield(.videoControl(action))
                case .closed:
                    break loop
                default:
                    break
                }
            }
            // Closed by the session (a song follows, the end: it let the window go first) or by
            // the user (which ends the run).
            let byUser = box.withLock { s -> Bool in
                guard s.window === window else { return false }
                s.window = nil
                return !s.over
            }
            if byUser {
                sink.set(nil)
                cont.yield(.videoWindowClosed(problem: nil))
            }
        }
    }
}

/// The pipeline's source over a ``VideoDecoder`` (as the player's): the frame a seek returns is
/// held for the next ``nextFrame()``. Used on the pipeline's decoding thread only.
final class QueueFrameSource: VideoFrameSource, @unchecked Sendable {
    private let decoder: VideoDecoder
    /// The item's subtitle, read before each frame is decoded (`j` changes it).
    private let subtitles: SubtitleChoice?
    private var held: VideoFrame?
    /// A seek went past the end of the video: nothing until the next seek.
    private var pastEnd = false

    init(decoder: VideoDecoder, subtitles: SubtitleChoice? = nil) {
        self.decoder = decoder
        self.subtitles = subtitles
    }

    func nextFrame() throws -> VideoFrame? {
        if let f = held {
            held = nil
            return f
        }
        if pastEnd { return nil }
        if let subtitles { decoder.subtitle = subtitles.selection }
        return try decoder.nextFrame()
    }

    func seek(to seconds: Double, exact: Bool) throws {
        held = nil
        pastEnd = false
        if let subtitles { decoder.subtitle = subtitles.selection }
        do {
            held = try decoder.seek(to: seconds, exact: exact)
        } catch .invalidArgument {
            pastEnd = true
        }
    }
}
