// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Tonearm
#if canImport(Glibc)
import Glibc
#endif

/// Runs `tonearm play`: one gapless ``MusicPlayer`` for the whole queue (saved as it plays),
/// published over MPRIS, with either the live screen or plain progress lines.
final class PlaySession: @unchecked Sendable {
    struct Settings {
        var volume: Float?
        var repeatMode: RepeatMode?
        var shuffle: Bool
        var replayGain: ReplayGainMode
        var preamp: Double
        var crossfade: Double
        var mix: Bool
        var resume: Bool
        var eq: EQChoice
        var rate: Float
        var effects: EffectOptions
        /// The index of the file to start with (with `shuffle`, the first of the shuffled order;
        /// without one named, shuffling starts from a random file).
        var start: Int? = nil
        /// What the keys do (the config file's `[keys]`, over the defaults).
        var keys: KeyBindings = .defaults
        /// The config file's `[keys]` table: action name → the keys bound to it (what ``keys``
        /// was made from). Empty: the default keys.
        var keyBindings: [String: [String]] = [:]
        /// Where each action of ``keyBindings`` was bound, `PATH:LINE`, for error messages.
        var keyBindingPlaces: [String: String] = [:]
    }

    private let files: [String]
    private let problems: [String]
    private let selection: OutputSelection
    private let notice: String?
    private var settings: Settings
    private let interactive: Bool
    /// Whether the terminal's keys are taken at the start (cbreak mode): standard input is a
    /// terminal and this process is in its foreground (live screen or `--plain`).
    private let readsKeys: Bool
    private let terminal: Terminal
    /// Keys and signals, while the session runs (stopped while the picker has the terminal).
    private var reader: InputReader<PlayKeyDecoder>?
    /// Why items failed, by persistent ID (shown on their queue rows).
    private var failures: [UInt64: String] = [:]
    /// What failed, for the summary printed after the screen is gone: "file: reason".
    private var failureSummary: [String] = []
    /// Files whose audio ends before their header says (truncated), by path: frames there are,
    /// frames stated, and the rate (nil until the file is announced).
    private var shortFiles: [String: (actual: Int64, expected: Int64, rate: Double?)] = [:]
    /// Those that played to their early end: "file: ended early, at 0:05 of 0:10", for the summary.
    private var endedEarly: [String] = []
    /// Corrupt packets skipped, by path: the first of a file is said when met, the count in the
    /// summary (a damaged file can have hundreds).
    private var corruptPackets = CorruptPacketTally()
    /// What the screen keeps saying when the next item is announced (that the last one ended early).
    private var messageForNext: String?
    /// Titles and artists read from the queue's files, by path.
    private var tags: [String: (title: String, artist: String?)] = [:]
    /// The queue's rows, kept between events (built again only when the queue changed).
    private var queueRows = QueueRows()
    /// The play order behind ``ScreenState/queue``: row → queue index.
    private var rowItems: [Int] { queueRows.rowItems }
    /// The terminal's size, read when the screen is taken and on SIGWINCH (never polled).
    private var size = (columns: 80, rows: 24)
    /// Ticks of the screen's clock (every fifth writes the frame even when it is unchanged).
    private var ticks = 0
    /// The volume before `m` muted (nil: not muted).
    private var mutedVolume: Float?
    private var screen = ScreenState()
    private let player: MusicPlayer
    private let remote: RemoteBridge
    private var timePitch: AudioUnitTimePitch?
    private var lastPlainSecond = -1
    private var failed = 0
    private var played: Set<UInt64> = []
    private var metadataFor: UInt64 = 0
    /// The queue index of the item announced last.
    private var announcedIndex = -1
    /// The queue is starting again where it was, its output back after a loss.
    private var playingOnAfterOutputLoss = false
    /// Whether playback has started (item changes before that come from setting the queue).
    private var started = false
    private var latest: (QueueItem, Int)?
    /// Whether the player is published over MPRIS (so that `playerctl` can go on after a pause).
    private var published = false
    /// Whether ``startAfterFirstSound()`` has run.
    private var startedAfterFirstSound = false
    /// Follows the system volume for the live screen (PulseAudio), once started.
    private var volumeTask: Task<Void, Never>?
    /// The signal that ended the session, if one did.
    private(set) var interruptedBy: Int32?
    private let events: AsyncStream<SessionEvent>
    private let continuation: AsyncStream<SessionEvent>.Continuation
    /// One file output for the whole session, so `file:` records everything.
    private let sharedFileOutput: SessionOutput?
    private let device: String?
    /// The media library the queue came from: its items' plays and skips are counted there.
    private let library: MediaLibrary?
    /// The library's persistentIDs of the files that are its items.
    private let libraryIDs: [String: UInt64]
    /// The audio stream to play of each file that names one (`--audio-track`), by path.
    private let audioStreams: [String: Int]
    /// The picture of the queue's video items (nil: their sound only).
    private var video: QueueVideo?

    init(files: [String], problems: [String], selection: OutputSelection, device: String? = nil, notice: String?, settings: Settings,
         interactive: Bool, library: MediaLibrary? = nil, libraryIDs: [String: UInt64] = [:],
         audioStreams: [String: Int] = [:], video: QueueVideo.Request? = nil) {
        self.files = files
        self.audioStreams = audioStreams
        self.library = library
        self.libraryIDs = libraryIDs
        self.problems = problems
        self.selection = selection
        self.device = device
        self.notice = notice
        self.settings = settings
        self.interactive = interactive
        readsKeys = Terminal.isForeground
        terminal = Terminal(drawsScreen: interactive)
        let (stream, sink) = AsyncStream<SessionEvent>.makeStream()
        (events, continuation) = (stream, sink)
        let shared: SessionOutput?
        if case .file(let path) = selection { shared = SessionOutput(FileOutput(path: path)) } else { shared = nil }
        sharedFileOutput = shared
        let store = QueueStateStore(path: QueueStateStore.defaultPath())
        // The process's audio session: playback, exclusive unless --mix (other Tonearm players
        // pause while this one plays and resume after); its stream role goes on the output.
        let session = AudioSession.shared
        try? session.setCategory(.playback, options: settings.mix ? [.mixWithOthers] : [])
        let role = session.streamProperties["media.role"] ?? "music"
        player = MusicPlayer(output: {
            if let shared { return shared }
            return selection.makeDriver(streamName: "Tonearm", role: role, device: device, buffering: .steady)
        }, store: store, session: session)
        remote = RemoteBridge(player: player) { sink.yield(.remote($0)) }
        self.video = video.map { QueueVideo(request: $0, queue: player.queue, continuation: sink) }
        self.video?.setSpeed(settings.rate)
        screen.output = device.map { "\(selection.description):\($0)" } ?? selection.description
        screen.notice = notice
        screen.eq = settings.eq.description
        screen.rate = settings.rate
        screen.keys = settings.keys
        screen.color = ScreenState.colorAllowed()
    }

    /// Plays the queue; returns whether any file failed.
    func run() async -> Bool {
        if let n = notice, !interactive { Terminal.writeError(n) }
        startInput()
        for p in problems { report(p) }
        failureSummary += problems
        failed += problems.count
        let playerEvents = player.events
        let cont = continuation
        let pump = Task { for await e in playerEvents { cont.yield(.queue(e)) } }
        // The screen is redrawn five times a second; plain progress lines come every 5 s of
        // playback, so plain mode wakes up only for those (just after each 5 s step).
        let ticker: Task<Void, Never>
        if interactive {
            ticker = SessionInput.startTicker(continuation, every: .milliseconds(200))
        } else {
            let player = self.player
            ticker = SessionInput.startTicker(continuation) { Self.untilNextPlainLine(elapsed: player.currentPlaybackTime) }
        }
        defer {
            volumeTask?.cancel()
            ticker.cancel()
            pump.cancel()
            stopInput()
            remote.stop()
        }
        configurePlayer()
        let recorder = library.map { LibraryPlayRecorder(player: player, library: $0) }
        player.play()
        if player.nowPlayingItem == nil {
            stopInput()
            report("nothing to play")
            printFailureSummary()
            return true
        }
        loop: for await event in events {
            switch event {
            case .tick:
                startAfterFirstSound()  // at the latest (an item that takes long to open)
                // Once a second the frame is written even when unchanged: whatever else wrote
                // on the terminal (another program's message) is gone within a second.
                ticks += 1
                if ticks % 5 == 0 { terminal.invalidate() }
                draw()
            case .resized:
                size = Terminal.size(of: terminal.output)
                terminal.invalidate()
                draw()
            case .signalled(let sig):
                interruptedBy = sig
                break loop
            case .continued:
                // `fg` after Ctrl-Z and `bg`: the terminal is taken again.
                if terminal.resumeIfForeground() {
                    size = Terminal.size(of: terminal.output)
                    terminal.invalidate()
                    draw()
                }
            case .suspend:
                terminal.suspend()
                size = Terminal.size(of: terminal.output)  // it may have changed while stopped
                terminal.invalidate()
                draw()
            case .systemVolume(let v):
                screen.systemVolume = v
                draw()
            case .queue(let e):
                switch e {
                case .stateChanged, .itemFailed, .finished: startAfterFirstSound()
                default: break
                }
                if handle(e) { break loop }
                draw()
            case .player, .daemon, .daemonGone:
                break
            case .videoWindowClosed(let problem):
                // Closed by the user (q, Esc, its close button): the run ends, as for one video.
                guard let problem else { break loop }
                report("\(problem): playing the sound only")
                draw()
            case .videoNote(let note):
                if interactive && terminal.isActive { screen.message = note } else { Terminal.write("  \(note)\n") }
                draw()
            case .videoControl(let action):
                // A click on the window's controls: what they show, whatever the keys are bound to.
                switch action {
                case .playPause: remote.transport.togglePlayPause()
                case .seek(let to): player.currentPlaybackTime = min(max(0, to), max(0, screen.duration - 0.5))
                }
                draw()
            case .keyName(let k):
                if await handle(key: k) { break loop }
                draw()
            case .remote(let request):
                if handle(remote: request) { break loop }
                draw()
            }
        }
        player.finishSaving()
        await recorder?.finish()
        let videoStatistics = video?.statistics
        let videoError = video?.finish()
        player.stop()
        try? player.session?.setActive(false, options: .notifyOthersOnDeactivation)
        sharedFileOutput?.finish()
        stopInput()
        if let videoError { Terminal.writeProblem("\(videoError)") }
        printFailureSummary()
        if !interactive {
            let early = endedEarly.isEmpty ? "" : ", \(endedEarly.count) ended early"
            // Dropouts are said, not hidden: the server's buffer ran dry or decoding was late.
            let u = player.underrunCount
            let underruns = u == 0 ? "" : ", \(u) underrun\(u == 1 ? "" : "s") (audio came late)"
            if let stats = videoStatistics { Terminal.write(stats.summary + "\n") }
            Terminal.write("Done: \(played.count) played, \(failed) failed\(early)\(underruns)\(corruptPackets.summaryPart)\n")
            for line in endedEarly { Terminal.write("  " + line + "\n") }
            for line in corruptPackets.summaryLines { Terminal.write(line + "\n") }
        }
        return failed > 0
    }

    /// What can wait until the first item plays (or fails), so that it does not delay the first
    /// sample: the session bus and MPRIS (with the current state, which reads the item's track
    /// number from its tags), the queue's tags for the screen, and the system volume (a second
    /// PulseAudio connection, for the live screen). Once; from the session loop.
    private func startAfterFirstSound() {
        guard !startedAfterFirstSound else { return }
        startedAfterFirstSound = true
        published = remote.start() == nil  // without a session bus the player simply is not published
        refreshQueueScreen()
        publish()
        // The system volume of the output in use, for the live screen (PulseAudio only).
        if interactive, case .pulse(let server) = selection {
            let system = SystemVolume(server: server, output: device)
            if let now = try? system.state() { screen.systemVolume = now }
            if let changes = try? system.changes {
                let cont = continuation
                volumeTask = Task { for await v in changes { cont.yield(.systemVolume(v)) } }
            }
        }
    }

    /// Takes the terminal (the screen, or only its keys with `--plain`) and starts reading keys
    /// and signals: the quit signals always, Ctrl-Z and resizes while the terminal is taken.
    private func startInput() {
        var signals = [SIGINT, SIGTERM, SIGHUP]
        if readsKeys || interactive { signals += [SIGTSTP, SIGCONT] }
        if interactive { signals.append(SIGWINCH) }
        // Keys are read whenever this process has the terminal's foreground (also after `fg`).
        // The handlers are in place before the terminal is taken.
        let reader = SessionInput.startReader(signals: signals, readsInput: isatty(0) == 1, continuation)
        if readsKeys || interactive { terminal.enter() }
        size = Terminal.size(of: terminal.output)
        self.reader = reader
    }

    /// Gives the terminal back (first: a signal after the reader stops has its default action
    /// again), then stops reading.
    private func stopInput() {
        terminal.restore()
        reader?.stop()
        reader = nil
    }

    /// After the screen is gone: what failed and why, on standard error (plain mode reported
    /// each as it came).
    private func printFailureSummary() {
        guard interactive else { return }
        if !failureSummary.isEmpty {
            Terminal.writeError("\(failureSummary.count == 1 ? "1 file" : "\(failureSummary.count) files") could not be played:")
            for line in failureSummary { Terminal.writeError("  " + line) }
        }
        if !endedEarly.isEmpty {
            Terminal.writeError("\(endedEarly.count == 1 ? "1 file" : "\(endedEarly.count) files") ended early (cut short):")
            for line in endedEarly { Terminal.writeError("  " + line) }
        }
    }

    /// Sets the queue (or restores the saved one) and the sound settings.
    private func configurePlayer() {
        var restored = false
        if settings.resume {
            do { restored = try player.restore() } catch { report("\(error); starting a new queue") }
            if !restored && files.isEmpty { report("no saved queue to resume") }
            if restored { appendNew(files) }
        }
        if !restored { player.setQueue(with: files.map(queueItem)) }
        if let v = settings.volume { player.volume = v }
        if let r = settings.repeatMode { player.repeatMode = r }
        if settings.shuffle && player.shuffleMode == .off {
            player.queue.startShuffled(.songs, startingWith: settings.start)
        } else if let start = settings.start {
            player.queue.skipToItem(at: start)
        }
        player.queue.setReplayGain(settings.replayGain, preamp: settings.preamp)
        player.queue.crossfadeDuration = settings.crossfade
        settings.eq.apply(to: player.queue.eq)
        settings.effects.applyEQSettings(to: player.queue.eq)
        applyEffects()
        screen.volume = player.volume
        // Tags and MPRIS (which reads the track number from the tags) after the first sound.
        queueRows.queueChanged()
        refreshQueueScreen(readingTags: false)
    }

    /// Appends to a resumed queue the files it does not hold yet (`play --resume DIR` run again
    /// does not add DIR's files a second time).
    private func appendNew(_ files: [String]) {
        var held = Set(player.queue.items().map { $0.url.standardized.absoluteString })
        for f in files {
            let item = queueItem(f)
            guard held.insert(item.url.standardized.absoluteString).inserted else { continue }
            player.queue.append(item)
        }
    }

    /// The queue's item for a file argument: its library ID, and the audio stream `--audio-track` chose.
    private func queueItem(_ file: String) -> QueueItem {
        var item = QueueItem(pathOrURL: file, persistentID: libraryIDs[file])
        item.audioStream = audioStreams[file]
        return item
    }

    /// The effect chain: time-pitch for the speed (when not 1), then the options' effects.
    private func applyEffects() {
        var chain: [AudioNode] = []
        if settings.rate != 1 {
            let tp = timePitch ?? AudioUnitTimePitch()
            tp.rate = settings.rate
            timePitch = tp
            chain.append(tp)
        } else {
            timePitch = nil
        }
        player.queue.effects = chain + settings.effects.makeNodes()
    }

    /// Reacts to a queue event; true when the session is over.
    private func handle(_ e: QueuePlayerEvent) -> Bool {
        switch e {
        case .currentItemChanged(let index, let item):
            refreshQueueScreen()
            guard let item, let index else { return false }
            latest = (item, index)
            // The same entry again, as the queue plays on after its output came back, is not news.
            let resumed = playingOnAfterOutputLoss && (item.persistentID, index) == (metadataFor, announcedIndex)
            playingOnAfterOutputLoss = false
            if started && !resumed { announce(item, index: index) }
        case .stateChanged(.interrupted):
            video?.clockChanged()
            report("interrupted by another player; paused until it is done")
        case .stateChanged(let state):
            video?.clockChanged()
            // The first start: the item that plays (earlier item events came from setting the
            // queue; the queue may already have moved on, so the events say which, not the player).
            if state == .playing && !started, let (item, i) = latest {
                started = true
                announce(item, index: i)
            }
        case .itemFailed(let index, let item, let error):
            failed += 1
            let reason = "\(error)"
            // On its row, why (the row names the file).
            let prefix = item.path + ": "
            failures[item.persistentID] = reason.hasPrefix(prefix) ? String(reason.dropFirst(prefix.count)) : reason
            let name = item.isRemote ? item.path : item.url.lastPathComponent
            failureSummary.append(reason.contains(item.path) ? reason : "\(item.path): \(reason)")
            report(interactive ? "\(name) failed: \(reason)" : reason)
            queueRows.itemChanged(at: index)
            refreshQueueScreen()
        case .decodeWarning(.truncated(let path, let expected, let actual)):
            // Said when the file reaches its early end (itemPlayedToEnd), with where.
            if shortFiles[path] == nil { shortFiles[path] = (actual, expected, nil) }
        case .decodeWarning(let w):
            if let message = corruptPackets.message(for: w) { report(message) }
        case .seeked(let t):
            video?.seeked(to: t)
            remote.didSeek(to: t)
        case .finished:
            return true
        case .outputLost(let reason, true):
            // A sound server that went away (restarted, updated) is watched for: the queue plays
            // on from its place by itself when it answers again.
            let at = formatTime(player.currentPlaybackTime)
            report(interactive
                ? "the sound server went away (\(reason)); playing on from \(at) when it is back — space pauses"
                : "the sound server went away (\(reason)); waiting for it, to play on from \(at) (Ctrl-C ends)")
        case .outputReturned(let resuming):
            let at = formatTime(player.currentPlaybackTime)
            playingOnAfterOutputLoss = resuming
            report(resuming ? "the sound server is back; playing on from \(at)" : "the sound server is back")
        case .outputLost(let reason, false):
            // Without keys nothing would go on: the session ends rather than wait forever.
            guard interactive else {
                report("the output was lost (\(reason)); stopping")
                failed += 1
                return true
            }
            report("the output was lost (\(reason)); paused — press space to go on")
        case .outputRemoved(let previous):
            if interactive {
                report("the output \(previous) went away; paused — press space to go on on the new one")
            } else if published {
                report("the output \(previous) went away; paused (`playerctl -p tonearm play` goes on)")
            } else {
                // Neither keys nor MPRIS could go on: end rather than wait forever.
                report("the output \(previous) went away; stopping (no terminal and no session bus to go on from)")
                failed += 1
                return true
            }
        case .volumeChanged(let v):
            if mutedVolume != nil && v > 0 {
                mutedVolume = nil  // set from elsewhere (MPRIS): no longer muted
                screen.muted = false
            }
            screen.volume = mutedVolume ?? v
        case .ducked(let level):
            screen.message = level < 1 ? "another player asked to be heard over this one (ducked)" : nil
        case .repeatModeChanged(let r):
            screen.repeatMode = r
        case .shuffleModeChanged(let s):
            screen.shuffleMode = s
            queueRows.queueChanged()
            refreshQueueScreen()
        case .queueChanged:
            queueRows.queueChanged()
            refreshQueueScreen()
        case .itemPlayedToEnd(_, let item):
            sayEndedEarly(item)
        }
        publish()
        return false
    }

    /// Shows the now-playing item (title, tags, format) and prints the plain line.
    private func announce(_ item: QueueItem, index: Int) {
        video?.itemBecameCurrent(item)
        metadataFor = item.persistentID
        announcedIndex = index
        played.insert(item.persistentID)
        screen.message = messageForNext
        messageForNext = nil
        if item.isRemote {
            screen.title = item.url.lastPathComponent.isEmpty ? (item.url.host ?? item.path) : item.url.lastPathComponent
            screen.artist = nil
            screen.album = nil
            screen.albumArtist = nil
            screen.artwork = nil
            screen.format = "network stream"
            // What the stream's header states, once the queue has opened it (radio: none).
            let d = player.queue.currentDuration ?? 0
            screen.duration = d.isFinite && d < 1e7 ? d : 0
        } else if let file = try? AudioFile(path: item.path) {
            let md = file.metadata
            let f = file.fileFormat
            screen.title = md.title ?? item.url.lastPathComponent
            screen.artist = md.artist
            screen.album = md.album
            screen.albumArtist = md.albumArtist
            screen.artwork = md.artwork
            screen.format = describeFormat(codec: f.codecName, sampleRate: f.sampleRate, bits: f.bitsPerSample,
                                           channelLayout: f.channelLayout, bitRate: f.bitRate)
            screen.duration = file.duration
            for case .truncated(_, let expected, let actual) in file.warnings {
                shortFiles[item.path] = (actual, expected, file.processingFormat.sampleRate)
            }
            if let s = shortFiles[item.path], s.rate == nil { shortFiles[item.path]?.rate = file.processingFormat.sampleRate }
        } else {
            screen.title = item.url.lastPathComponent
            screen.artist = nil
            screen.album = nil
            screen.format = ""
            screen.duration = 0
        }
        lastPlainSecond = -1
        if !interactive {
            var line = "Playing \(index + 1)/\(screen.queue.count): \(screen.title)"
            if let a = screen.artist { line += " — \(a)" }
            Terminal.write(line + " [\(screen.format), \(formatTime(screen.duration))]\n")
        }
    }

    /// A truncated file that played to its end: said now (on the screen, or on standard error
    /// with `--plain`) and in the summary, with where it ended and how long it should have been.
    private func sayEndedEarly(_ item: QueueItem) {
        guard let s = shortFiles[item.path], let rate = s.rate, rate > 0 else { return }
        let line = "\(item.path): ended early, at \(formatTime(Double(s.actual) / rate)) of \(formatTime(Double(s.expected) / rate))"
            + " (the file is cut short)"
        endedEarly.append(line)
        report(line)
        // The next item's announcement (the same moment, at a gapless change) leaves it shown.
        if interactive && terminal.isActive { messageForNext = line }
    }

    /// The queue rows in play order (what plays next, also when shuffled), with titles and
    /// artists from the tags and why an item failed; the cursor kept on the queue.
    /// `readingTags: false` shows file names for rows whose tags have not been read yet. Tags are
    /// read only for the live screen (plain mode shows no rows). Built from all the items only
    /// when the queue changed (``QueueRows``); otherwise it costs the rows that changed.
    private func refreshQueueScreen(readingTags: Bool = true) {
        let reading = readingTags && interactive
        queueRows.refresh(&screen.queue, from: player.queue, cursor: screen.cursor, readingTags: reading) { item, readTags in
            let (title, artist) = readTags ? tags(of: item) : (tags[item.path] ?? (Self.name(of: item), nil))
            return ScreenState.QueueRow(title: title, artist: artist, failure: failures[item.persistentID])
        }
        screen.current = queueRows.current
        if let c = screen.cursor { screen.cursor = screen.queue.isEmpty ? nil : min(c, screen.queue.count - 1) }
        screen.repeatMode = player.repeatMode
        screen.shuffleMode = player.shuffleMode
    }

    /// An item's title and artist from its tags (the file name when untagged), read once.
    private func tags(of item: QueueItem) -> (title: String, artist: String?) {
        if let t = tags[item.path] { return t }
        var t: (title: String, artist: String?) = (Self.name(of: item), nil)
        if !item.isRemote, let md = try? AudioFile(path: item.path).metadata {
            t = (md.title ?? t.title, md.artist)
        }
        tags[item.path] = t
        return t
    }

    private static func name(of item: QueueItem) -> String {
        item.isRemote && item.url.lastPathComponent.isEmpty ? (item.url.host ?? item.path) : item.url.lastPathComponent
    }

    private func publish() {
        remote.update(RemoteBridge.State(
            item: player.nowPlayingItem, title: screen.title.isEmpty ? nil : screen.title, artist: screen.artist,
            album: screen.album, albumArtist: screen.albumArtist, artwork: screen.artwork,
            duration: screen.duration > 0 ? screen.duration : nil, elapsed: player.currentPlaybackTime,
            playing: player.playbackState, index: player.indexOfNowPlayingItem, count: screen.queue.count,
            volume: player.volume, repeatMode: player.repeatMode, shuffleMode: player.shuffleMode, rate: settings.rate))
    }

    /// Carries out a key (by name, through the bindings); true to quit. With the key help
    /// shown, a key only closes it.
    private func handle(key: String) async -> Bool {
        if screen.showsHelp {
            screen.showsHelp = false
            return false
        }
        guard let action = settings.keys.action(for: key, queueFocused: screen.cursor != nil) else { return false }
        switch action {
        case .pause:
            remote.transport.togglePlayPause()
        case .seekBack: player.currentPlaybackTime = max(0, player.currentPlaybackTime - 5)
        case .seekForward: player.currentPlaybackTime = min(max(0, screen.duration - 0.5), player.currentPlaybackTime + 5)
        case .volumeUp: setVolume((mutedVolume ?? player.volume) + 0.05)
        case .volumeDown: setVolume((mutedVolume ?? player.volume) - 0.05)
        case .mute:
            if let v = mutedVolume {
                setVolume(v)
            } else {
                let v = player.volume
                player.volume = 0
                mutedVolume = v
                screen.muted = true
                screen.volume = v
            }
        case .next: player.skipToNextItem()
        case .previous: player.skipToPreviousItem()
        case .restart: player.skipToBeginning()
        case .repeat:
            switch player.repeatMode {
            case .none: player.repeatMode = .one
            case .one: player.repeatMode = .all
            case .all: player.repeatMode = .none
            }
        case .shuffle:
            player.shuffleMode = player.shuffleMode == .off ? .songs : .off
        case .slower, .faster:
            // Speed in steps of 0.1 (pitch kept).
            let step: Float = action == .faster ? 0.1 : -0.1
            setRate(((settings.rate + step) * 10).rounded() / 10)
        case .eqNext:
            // The next preset (from a custom spec: the first preset).
            let all = EQPreset.all
            let next: EQPreset
            if case .preset(let cur) = settings.eq, let i = all.firstIndex(of: cur) {
                next = all[(i + 1) % all.count]
            } else {
                next = all[0]
            }
            settings.eq = .preset(next)
            settings.eq.apply(to: player.queue.eq)
            settings.effects.applyEQSettings(to: player.queue.eq)
            screen.eq = next.name
        case .help:
            screen.showsHelp = interactive
        case .quit:
            return true
        case .focusQueue:
            guard interactive else { break }
            screen.cursor = screen.cursor == nil && !screen.queue.isEmpty ? (screen.current ?? 0) : nil
            if screen.cursor != nil { refreshQueueScreen() }
        case .add:
            if interactive { return await addFromLibrary() }
        case .queueUp, .queueDown:
            guard let c = screen.cursor, !screen.queue.isEmpty else { break }
            screen.cursor = min(max(0, c + (action == .queueUp ? -1 : 1)), screen.queue.count - 1)
            refreshQueueScreen()  // tags of the rows that come into view
        case .queuePlay:
            guard let c = screen.cursor, rowItems.indices.contains(c) else { break }
            player.queue.skipToItem(at: rowItems[c])
            if player.playbackState != .playing { player.play() }
        case .queueRemove:
            guard let c = screen.cursor, rowItems.indices.contains(c) else { break }
            player.queue.remove(at: rowItems[c])
            queueRows.queueChanged()
            refreshQueueScreen()
            if screen.queue.isEmpty { report("the queue is empty: \(keyName(.add)) adds songs from the library, \(keyName(.quit)) quits") }
        case .queueMoveUp, .queueMoveDown:
            guard let c = screen.cursor, rowItems.indices.contains(c) else { break }
            guard player.shuffleMode == .off else {
                report("shuffled, the order is drawn at random: \(keyName(.shuffle)) turns shuffle off to reorder")
                break
            }
            let to = c + (action == .queueMoveUp ? -1 : 1)
            guard rowItems.indices.contains(to) else { break }
            player.queue.move(from: rowItems[c], to: rowItems[to])
            screen.cursor = to
            queueRows.queueChanged()
            refreshQueueScreen()
        }
        return false
    }

    /// The first key bound to `action`, as the help shows it.
    private func keyName(_ action: KeyAction) -> String {
        settings.keys.keys(for: action).first.map(KeyBindings.display) ?? action.rawValue
    }

    /// `a`: the library's picker (as `tonearm pick`) over the play screen, playback going on;
    /// what is picked is appended to the queue (shuffled: it plays next). True when a signal
    /// ended the picker (the session ends too).
    private func addFromLibrary() async -> Bool {
        let path = MediaLibrary.defaultPath
        let lib: MediaLibrary
        if let library {
            lib = library
        } else if FileManager.default.fileExists(atPath: path), let opened = try? MediaLibrary(path: path) {
            lib = opened
        } else {
            report("there is no library at \(path) to add from: scan folders into one with `tonearm library scan DIR`")
            return false
        }
        // The picker reads the keys and signals itself while it runs.
        stopInput()
        let size = Terminal.size(of: 1)
        let picker = MediaPicker(source: MediaPicker.LibrarySource(library: lib), view: .songs, search: "",
                                 pageSize: PickerScreen.pageSize(height: size.rows))
        let outcome = await PickSession(picker: picker, terminal: Terminal(output: 1, bracketedPaste: true), verb: "add",
                                        libraryPath: lib.path).run()
        startInput()
        switch outcome {
        case .picked(let items):
            for item in items { player.queue.append(QueueItem(pathOrURL: item.path, persistentID: item.persistentID)) }
            queueRows.queueChanged()
            refreshQueueScreen()
            report("added \(items.count == 1 ? "1 song" : "\(items.count) songs") to the queue")
        case .cancelled:
            break
        case .signalled(let sig):
            interruptedBy = sig
            return true
        }
        return false
    }

    /// Carries out a remote client's request; true to quit.
    private func handle(remote request: RemoteBridge.Request) -> Bool {
        switch request {
        case .setRate(let rate): setRate(rate)
        case .quit: return true
        }
        publish()
        return false
    }

    /// Plays at `rate` (kept within 0.5…2; pitch kept), shown on the screen and published.
    private func setRate(_ rate: Float) {
        settings.rate = min(2, max(0.5, rate))
        if let tp = timePitch { tp.rate = settings.rate } else { applyEffects() }
        video?.setSpeed(settings.rate)
        video?.clockChanged()
        screen.rate = settings.rate
    }

    private func setVolume(_ v: Float) {
        mutedVolume = nil
        screen.muted = false
        player.volume = volumeStep(v)
        screen.volume = player.volume
    }

    private func report(_ message: String) {
        if interactive && terminal.isActive {
            screen.message = message
        } else {
            Terminal.writeProblem(message)  // `tonearm: <file>: <why>`, as every error
        }
    }

    private func draw() {
        // Only the announced item's time: at a gapless change the queue is on the next item (its
        // time from 0) before its event has been handled, its title shown and its line printed.
        let announced = metadataFor != 0 && player.nowPlayingItem?.persistentID == metadataFor
        if announced { screen.elapsed = player.currentPlaybackTime }
        switch player.playbackState {
        case .playing:
            // The player may be playing before its state event is handled: what waits for the
            // first sound (MPRIS) is there before the screen says so.
            startAfterFirstSound()
            screen.status = .playing
        case .paused, .interrupted: screen.status = .paused
        case .stopped: screen.status = .stopped
        }
        if interactive {
            let lines = LiveScreen.lines(screen, width: size.columns, height: size.rows)
            // A frame like the last one is not written again (the ticker's redraws while paused).
            terminal.drawFrame("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\n") + "\u{1B}[K\u{1B}[J")
        } else if player.playbackState == .playing && announced {
            let sec = Int(screen.elapsed)
            if sec / 5 != lastPlainSecond / 5 || lastPlainSecond < 0 {
                lastPlainSecond = sec
                let picture = video?.isShowing == true ? (video?.statistics?.status ?? "") : ""
                Terminal.write("  \(formatTime(screen.elapsed)) / \(formatTime(screen.duration))\(picture)\n")
            }
        }
    }
}

extension PlaySession {
    /// How long plain mode waits for its next tick: until just after the playback time reaches
    /// the next multiple of 5 s (when `draw()` prints a line), at most that long (paused, the time
    /// stands still) and at least 0.2 s.
    static func untilNextPlainLine(elapsed: Double) -> Duration {
        let e = elapsed.isFinite ? max(0, elapsed) : 0
        let left = 5 - e.truncatingRemainder(dividingBy: 5) + 0.02
        return .milliseconds(Int((min(5.02, max(0.2, left)) * 1000).rounded()))
    }

    /// The EQ and speed the session ended with, for `--resume` (the volume is saved with the queue).
    var settingsToRemember: SavedPlaybackSettings {
        SavedPlaybackSettings(eq: settings.eq.description, rate: settings.rate)
    }
}
