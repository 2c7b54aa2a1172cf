// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Tonearm
import TonearmDesktop
import TonearmKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Runs `tonearm play URL` for one network stream through a ``Player``: it waits for the buffer
/// rather than stutter, shows what is in memory on the progress bar, says when the network
/// stalls and when it comes back, and shows a radio station's current title (also in Now
/// Playing, over MPRIS through the ``RemoteBridge`` that local playback uses).
///
/// It also plays one local video (`tonearm play VIDEO`): the picture goes to a ``PlayerView``
/// window (whose keys work beside the terminal's; closing it ends the session), to nothing
/// (`--video-output null`) or to a YUV4MPEG2 file. A network URL's picture goes there too; without
/// `--video-output` it opens a window by itself once the item has loaded and has a video track
/// (``StreamVideoWhenFound``), as a local video's does.
final class StreamSession: @unchecked Sendable {
    /// The video's window once open, and whether the session is over (shared with the task
    /// that opens it).
    final class ViewSlot: Sendable {
        private let state = Mutex<(view: PlayerView?, over: Bool)>((nil, false))
        func withLock<T>(_ body: (inout (view: PlayerView?, over: Bool)) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// Where a network URL's picture goes when no `--video-output` says: decided once the item
    /// has loaded (whether it has video is known then).
    enum StreamVideoWhenFound {
        /// A window, when the item has a video track.
        case window(fullScreen: Bool)
        /// No display: the sound only, said when the item has a video track.
        case noDisplay
    }

    /// Where a video's picture goes.
    struct Video {
        var output: VideoOutputChoice
        var fullScreen: Bool
        /// The picture's size when the command knows it already (its probe of a local file):
        /// the window is created while the item loads.
        var presentationSize: VideoSize? = nil
    }

    /// The keys line: the keys bound to what a stream's screen does (the defaults: "space pause
    /// · ←/→ seek 5 s · ↑/↓ volume · q quit"); the other bindings do nothing here.
    static func help(_ keys: KeyBindings) -> String {
        func k(_ a: KeyAction) -> String { keys.keys(for: a).first.map(KeyBindings.display) ?? "-" }
        return "\(k(.pause)) pause · \(k(.seekBack))/\(k(.seekForward)) seek 5 s · "
            + "\(k(.volumeUp))/\(k(.volumeDown)) volume · \(k(.quit)) quit"
    }

    private let url: URL
    private let selection: OutputSelection
    private let device: String?
    private let notice: String?
    private let settings: PlaySession.Settings
    private let interactive: Bool
    private let terminal = Terminal()
    private var screen = ScreenState()
    private let player: Player
    private let item: PlayerItem
    private let remote: RemoteBridge
    private var failure: String?
    private var stalledSince: Date?
    private var lastPlainSecond = -1
    private var announced = false
    /// Corrupt packets skipped: the first said when met, the count in the summary (as `play` does).
    private var corruptPackets = CorruptPacketTally()
    private(set) var interruptedBy: Int32?
    private let events: AsyncStream<SessionEvent>
    private let continuation: AsyncStream<SessionEvent>.Continuation
    private var reader: InputReader<PlayKeyDecoder>?
    private var video: Video?
    /// A network URL's window, opened once the item has loaded if it has video (nil: none).
    private let videoWhenFound: StreamVideoWhenFound?
    /// The window's task and the NowPlayingSession of a picture found once the item loaded.
    private var foundVideoTask: Task<Void, Never>?
    private var foundNowPlaying: NowPlayingSession?
    /// The video's window once open, and whether the session is over (a window that opens
    /// after that is closed at once).
    private let view = ViewSlot()
    private var y4m: Y4MVideoRenderer?
    private var videoRenderer: (any PlayerVideoRenderer)?

    init(url: URL, selection: OutputSelection, device: String?, notice: String?, settings: PlaySession.Settings,
         interactive: Bool, video: Video? = nil, audioStream: Int? = nil, subtitle: SubtitleSelection? = nil,
         videoWhenFound: StreamVideoWhenFound? = nil) {
        self.video = video
        self.videoWhenFound = video == nil ? videoWhenFound : nil
        self.url = url
        self.selection = selection
        self.device = device
        self.notice = notice
        self.settings = settings
        self.interactive = interactive
        (events, continuation) = AsyncStream<SessionEvent>.makeStream()
        let session = AudioSession.shared
        // A video is a film: `.moviePlayback` (its stream's role is `video`), and it takes the
        // session from a music player while it plays (``NowPlayingSession`` in ``run()``).
        try? session.setCategory(.playback, mode: video == nil ? .default : .moviePlayback,
                                 options: settings.mix ? [.mixWithOthers] : [])
        let role = session.streamProperties["media.role"] ?? "music"
        item = audioStream == nil ? PlayerItem(url: url) : PlayerItem(url: url, audioStream: audioStream)
        // Chosen by the caller among the file's text tracks (or a file): nothing to refuse.
        try? item.select(subtitle: subtitle)
        player = Player(output: { selection.makeDriver(streamName: "Tonearm", role: role, device: device, buffering: .steady) })
        remote = RemoteBridge(stream: player, video: video != nil)
        screen.output = device.map { "\(selection.description):\($0)" } ?? selection.description
        screen.notice = notice
        screen.eq = settings.eq.description
        screen.rate = settings.rate
        screen.title = url.lastPathComponent.isEmpty ? (url.host ?? url.absoluteString) : url.lastPathComponent
        screen.format = url.isFileURL ? "opening…" : "connecting to \(url.host ?? url.absoluteString)…"
        screen.help = Self.help(settings.keys)
    }

    /// Plays the stream; returns whether it failed.
    func run() async -> Bool {
        if let n = notice, !interactive { Terminal.writeError(n) }
        startInput()
        let playerEvents = player.events
        let cont = continuation
        let pump = Task { for await e in playerEvents { cont.yield(.player(e)) } }
        let ticker = SessionInput.startTicker(continuation, every: interactive ? .milliseconds(200) : .seconds(1))
        _ = remote.start()  // without a session bus the player is simply not published
        defer {
            ticker.cancel()
            pump.cancel()
            remote.stop()
            stopInput()
        }
        if let v = settings.volume { player.volume = v }
        settings.eq.apply(to: player.eq)
        settings.effects.applyEQSettings(to: player.eq)
        if settings.rate != 1 { player.defaultRate = settings.rate }
        if !settings.effects.makeNodes().isEmpty { report("effects other than the equaliser are not applied to streams yet") }
        screen.volume = player.volume
        player.replaceCurrentItem(with: item)
        let videoTask = startVideo()
        // A video takes the session (interrupting a music player that is not mixable), the
        // remote commands and Now Playing while it plays, and gives them back when it ends.
        let nowPlaying = video.map { _ in
            NowPlayingSession(player: player, audioSession: .shared, infoCenter: remote.info, commandCenter: remote.commands)
        }
        player.play()
        if !interactive && !url.isFileURL { Terminal.write("Connecting to \(url.absoluteString)\n") }
        loop: for await event in events {
            switch event {
            case .tick:
                draw()
            case .signalled(let sig):
                interruptedBy = sig
                break loop
            case .player(let e):
                if ProcessInfo.processInfo.environment["TONEARM_DEBUG_EVENTS"] != nil { Terminal.writeError("event: \(e)") }
                if handle(e) { break loop }
                draw()
            case .keyName(let k):
                if handle(key: k) { break loop }
                draw()
            case .resized:
                draw()
            case .suspend:
                terminal.suspend()
                draw()  // the size may have changed while stopped
            case .continued:
                // `fg` after Ctrl-Z and `bg`: the terminal is taken again.
                if terminal.resumeIfForeground() { draw() }
            case .videoNote(let note):
                report(note)
                draw()
            case .videoWindowClosed(let problem):
                guard let problem else { break loop }
                report("\(problem): playing the sound only")
            case .queue, .systemVolume, .remote, .videoControl, .daemon, .daemonGone:
                break
            }
        }
        stopVideo(videoTask ?? foundVideoTask)
        nowPlaying?.invalidate()
        foundNowPlaying?.invalidate()
        player.pause()
        if let stats = player.videoStatistics, !interactive {
            let av = stats.lastAVDifference.map { String(format: ", A-V: %+.3f", $0) } ?? ""
            Terminal.write("Video: \(stats.presentedFrames) frames shown, \(stats.droppedFrames) dropped\(av)\n")
        }
        player.replaceCurrentItem(with: nil)
        try? AudioSession.shared.setActive(false, options: .notifyOthersOnDeactivation)
        if let failure {
            Terminal.writeProblem(failure)
        } else if !interactive {
            Terminal.write("Done: 1 played, 0 failed\(corruptPackets.summaryPart)\n")
            for line in corruptPackets.summaryLines { Terminal.write(line + "\n") }
        }
        return failure != nil
    }

    /// Sends the picture where ``video`` says: a window (opened once the item has loaded, at
    /// its size), a null renderer or a YUV4MPEG2 file. Returns the window's task.
    private func startVideo() -> Task<Void, Never>? {
        guard let video else { return nil }
        switch video.output {
        case .null:
            let r = NullVideoRenderer()
            videoRenderer = r
            player.addVideoRenderer(r)
        case .file(let path):
            do {
                let r: Y4MVideoRenderer
                if url.isFileURL {
                    let track = ((try? VideoTrackInfo.tracks(inFileAt: url.path)) ?? []).first
                    r = try Y4MVideoRenderer(path: path, frameRate: (track?.frameRateNumerator ?? 25, track?.frameRateDenominator ?? 1))
                } else {
                    // A network item's track is known once it has loaded, before its first frame.
                    let item = self.item
                    r = Y4MVideoRenderer(path: path, frameRateAtFirstFrame: {
                        item.selectedVideoTrack.map { ($0.frameRateNumerator ?? 25, $0.frameRateDenominator ?? 1) }
                    })
                }
                y4m = r
                videoRenderer = r
                player.addVideoRenderer(r)
            } catch {
                report("\(error): playing the sound only")
            }
        case .window:
            let player = self.player, cont = continuation, box = view
            let options = PlayerView.Options(fullScreen: video.fullScreen, expectedPresentationSize: video.presentationSize)
            return Task {
                do throws(PlayerViewError) {
                    let v = try await PlayerView.open(for: player, options: options)
                    // Now Playing is the session's (on the MPRIS service's center), not the view's.
                    v.updatesNowPlayingInfoCenter = false
                    let over = box.withLock { s -> Bool in
                        if !s.over { s.view = v }
                        return s.over
                    }
                    if over { v.close(); return }
                    // Said (a plain line, or the screen's message) when the picture is on screen, and how big.
                    let window = v.window
                    Task.detached {
                        guard let p = window.waitForPresentation(timeout: 60, where: { $0.frameTime != nil }) else { return }
                        cont.yield(.videoNote("Video: the first frame shown in a window of \(p.outputWidth)×\(p.outputHeight)"))
                    }
                    // j in the window (the view's own key) draws the next subtitle: said as mpv's OSD does.
                    let steps = v.subtitleChanges
                    let saying = Task.detached {
                        for await s in steps { cont.yield(.videoNote(SubtitleSelection.describe(s, in: v.subtitleCycle()))) }
                    }
                    await v.run()
                    saying.cancel()
                    cont.yield(.videoWindowClosed(problem: nil))
                } catch .window(let e) {
                    cont.yield(.videoWindowClosed(problem: "\(e)"))
                } catch {
                    // The item failed: the player's own events say so.
                }
            }
        }
        return nil
    }

    /// Closes the window (pausing the player) or detaches the renderer; the file is closed.
    private func stopVideo(_ task: Task<Void, Never>?) {
        let v = view.withLock { s -> PlayerView? in
            s.over = true
            return s.view
        }
        v?.close()
        task?.cancel()
        if let r = videoRenderer { player.removeVideoRenderer(r) }
        if let y4m, let error = y4m.finish() { Terminal.writeProblem("\(error)") }
    }

    /// Reacts to a player event; true when the session is over.
    private func handle(_ e: PlayerEvent) -> Bool {
        switch e {
        case .itemStatusChanged(.readyToPlay):
            announce()
        case .itemStatusChanged(.failed(let error)):
            failure = "\(error)"
            return true
        case .failedToPlayToEndTime(let error):
            failure = "the stream broke off: \(error)"
            return true
        case .didPlayToEndTime:
            return true
        case .playbackStalled:
            stalledSince = Date()
            report("the network is late: waiting for the buffer to fill")
        case .timeControlStatusChanged(.playing):
            if let since = stalledSince {
                report(String(format: "playing again after %.1f s", Date().timeIntervalSince(since)))
                stalledSince = nil
            } else if interactive {
                screen.message = nil
            }
        case .timedMetadata(let fields):
            if let title = fields["StreamTitle"], !title.isEmpty {
                screen.title = title
                if !interactive { Terminal.write("Now: \(title)\n") }
            }
        case .newErrorLogEntry(let entry):
            // Retries only: a failure that ends the stream is reported once, as the failure.
            if entry.action.hasPrefix("retrying") { report("\(entry.failure) — \(entry.action)") }
        case .outputLost(let reason, true):
            // The sound server went away (restarted, updated): the player plays on by itself
            // from its place when it answers again.
            report(interactive ? "the sound server went away (\(reason)); playing on when it is back — space pauses"
                               : "the sound server went away (\(reason)); waiting for it (Ctrl-C ends)")
        case .outputLost(let reason, false):
            // Without keys nothing would go on: the session ends rather than wait forever.
            guard interactive else {
                failure = "the output was lost (\(reason)); stopping"
                return true
            }
            report("the output was lost (\(reason)); paused — press space to go on")
        case .outputReturned(let resuming):
            report(resuming ? "the sound server is back; playing on" : "the sound server is back")
        case .decodeWarning(let w):
            if let message = corruptPackets.message(for: w) { report(message) }
        default:
            break
        }
        publish()
        return false
    }

    /// Shows what the stream is, once it has opened.
    private func announce() {
        guard !announced else { return }
        announced = true
        let md = item.metadata
        if let t = md.title { screen.title = t }
        screen.artist = md.artist
        screen.album = md.album
        if let f = item.format {
            screen.format = describeFormat(codec: f.codecName, sampleRate: f.sampleRate, bits: f.bitsPerSample,
                                           channelLayout: f.channelLayout, bitRate: f.bitRate)
                + (url.isFileURL ? "" : " · network stream")
        }
        if video == nil, let found = videoWhenFound, item.selectedVideoTrack != nil {
            switch found {
            case .window(let fullScreen):
                // The URL has a picture: its window opens (as a local video's), and the video
                // takes the session, the remote commands and Now Playing while it plays.
                video = Video(output: .window, fullScreen: fullScreen)
                foundVideoTask = startVideo()
                foundNowPlaying = NowPlayingSession(player: player, audioSession: .shared, infoCenter: remote.info,
                                                    commandCenter: remote.commands)
            case .noDisplay:
                report(VideoPlayback.noDisplayNotice)
            }
        }
        if video != nil, let t = item.selectedVideoTrack {
            let picture = "\(t.codecName.uppercased()) \(t.displayWidth)×\(t.displayHeight)"
            screen.format = item.hasAudio ? "\(picture) · \(screen.format)" : "\(picture) · no sound"
        }
        screen.isLive = item.duration == .indefinite
        screen.duration = item.duration.seconds ?? 0
        if !interactive {
            let length = screen.isLive ? "live" : formatTime(screen.duration)
            Terminal.write("Playing \(screen.title) [\(screen.format), \(length)]\n")
        }
    }

    private func publish() {
        let playing = player.timeControlStatus == .playing
        remote.publish(NowPlayingInfo(title: screen.title, artist: screen.artist, album: screen.album,
                                      duration: screen.isLive || screen.duration == 0 ? nil : screen.duration,
                                      elapsedTime: player.currentTime(), playbackRate: playing ? 1 : 0, trackURL: url),
                       state: player.rate == 0 ? .paused : .playing, volume: player.volume)
    }

    /// Takes the terminal (interactive: the screen and its keys) and starts reading keys and
    /// signals, as ``PlaySession`` does: the quit signals always; Ctrl-Z, `fg` and resizes while
    /// the screen is shown.
    private func startInput() {
        var signals = [SIGINT, SIGTERM, SIGHUP]
        if interactive { signals += [SIGTSTP, SIGCONT, SIGWINCH] }
        // The handlers are in place before the terminal is taken.
        let reader = SessionInput.startReader(signals: signals, readsInput: interactive && isatty(0) == 1, continuation)
        if interactive { terminal.enter() }
        self.reader = reader
    }

    /// Gives the terminal back, then stops reading.
    private func stopInput() {
        terminal.restore()
        reader?.stop()
        reader = nil
    }

    /// Carries out a key (by name, through the bindings of `[keys]`); true to quit. Only what a
    /// stream does is bound here: pause, seek, volume, quit.
    private func handle(key: String) -> Bool {
        switch settings.keys.action(for: key, queueFocused: false) {
        case .pause:
            remote.transport.togglePlayPause()
        case .seekBack: player.seek(to: max(0, player.currentTime() - 5)) { _ in }
        case .seekForward: player.seek(to: player.currentTime() + 5) { _ in }
        case .volumeUp: setVolume(player.volume + 0.05)
        case .volumeDown: setVolume(player.volume - 0.05)
        case .quit: return true
        default: break
        }
        return false
    }

    private func setVolume(_ v: Float) {
        player.volume = volumeStep(v)
        screen.volume = player.volume
    }

    private func report(_ message: String) {
        if interactive {
            screen.message = message
        } else {
            Terminal.write("  \(message)\n")
        }
    }

    /// What the plain progress line says of the picture, as mpv's status line does:
    /// `, A-V: +0.003, dropped: 2` (empty without video).
    static func videoStatus(_ stats: VideoPipelineStatistics?) -> String {
        guard let stats else { return "" }
        let av = stats.lastAVDifference.map { String(format: ", A-V: %+.3f", $0) } ?? ""
        return "\(av), dropped: \(stats.droppedFrames)"
    }

    private func draw() {
        screen.elapsed = player.currentTime()
        switch player.timeControlStatus {
        case .playing: screen.status = .playing
        case .paused: screen.status = .paused
        case .waitingToPlayAtSpecifiedRate(.evaluatingBufferingRate): screen.status = .loading
        case .waitingToPlayAtSpecifiedRate: screen.status = .buffering
        }
        screen.loaded = item.loadedTimeRanges.map { $0.start...$0.end }
        let ahead = item.bufferedSecondsAhead
        screen.bufferedAhead = ahead.isFinite ? ahead : nil
        if interactive {
            Terminal.write("\u{1B}[H\u{1B}[J" + LiveScreen.render(screen, width: Terminal.width, height: Terminal.size(of: 1).rows))
        } else if screen.status == .playing && announced {
            let sec = Int(screen.elapsed)
            if sec / 5 != lastPlainSecond / 5 || lastPlainSecond < 0 {
                lastPlainSecond = sec
                let buffered = screen.bufferedAhead.map { String(format: ", %.1f s buffered", $0) } ?? ""
                let total = screen.isLive ? "live" : formatTime(screen.duration)
                Terminal.write("  \(formatTime(screen.elapsed)) / \(total)\(buffered)\(video == nil ? "" : Self.videoStatus(player.videoStatistics))\n")
            }
        }
        publish()
    }
}
