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
        /// The config file's `[keys]` table: action name → the keys bound to it (checked to be
        /// strings, not checked against the actions). Empty: the default keys.
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
    private let terminal = Terminal()
    private var screen = ScreenState()
    private let player: MusicPlayer
    private let remote: RemoteBridge
    private var timePitch: AudioUnitTimePitch?
    private var lastPlainSecond = -1
    private var failed = 0
    private var played: Set<UInt64> = []
    private var metadataFor: UInt64 = 0
    /// Whether playback has started (item changes before that come from setting the queue).
    private var started = false
    private var latest: (QueueItem, Int)?
    /// Whether the player is published over MPRIS (so that `playerctl` can go on after a pause).
    private var published = false
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

    init(files: [String], problems: [String], selection: OutputSelection, device: String? = nil, notice: String?, settings: Settings,
         interactive: Bool, library: MediaLibrary? = nil, libraryIDs: [String: UInt64] = [:]) {
        self.files = files
        self.library = library
        self.libraryIDs = libraryIDs
        self.problems = problems
        self.selection = selection
        self.device = device
        self.notice = notice
        self.settings = settings
        self.interactive = interactive
        (events, continuation) = AsyncStream<SessionEvent>.makeStream()
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
            return selection.makeDriver(streamName: "Tonearm", role: role, device: device)
        }, store: store, session: session)
        remote = RemoteBridge(player: player)
        screen.output = device.map { "\(selection.description):\($0)" } ?? selection.description
        screen.notice = notice
        screen.eq = settings.eq.description
        screen.rate = settings.rate
    }

    /// Plays the queue; returns whether any file failed.
    func run() async -> Bool {
        if let n = notice, !interactive { Terminal.writeError(n) }
        for p in problems { report(p) }
        failed += problems.count
        let signals = SessionInput.installSignalHandlers(continuation)
        var keyThread: Thread?
        if interactive {
            terminal.enter()
            keyThread = SessionInput.startKeyReader(continuation)
        }
        let playerEvents = player.events
        let cont = continuation
        let pump = Task { for await e in playerEvents { cont.yield(.queue(e)) } }
        let refresh: Duration = interactive ? .milliseconds(200) : .seconds(1)
        let ticker = SessionInput.startTicker(continuation, every: refresh)
        published = remote.start() == nil  // without a session bus the player simply is not published
        // The system volume of the output in use, for the live screen (PulseAudio only).
        var volumeTask: Task<Void, Never>?
        if interactive, case .pulse(let server) = selection {
            let system = SystemVolume(server: server, output: device)
            if let now = try? system.state() { screen.systemVolume = now }
            if let changes = try? system.changes {
                volumeTask = Task { for await v in changes { cont.yield(.systemVolume(v)) } }
            }
        }
        defer {
            volumeTask?.cancel()
            ticker.cancel()
            pump.cancel()
            signals.forEach { $0.cancel() }
            remote.stop()
            terminal.restore()
            _ = keyThread
        }
        configurePlayer()
        let recorder = library.map { LibraryPlayRecorder(player: player, library: $0) }
        player.play()
        if player.nowPlayingItem == nil {
            report("nothing to play")
            return true
        }
        loop: for await event in events {
            switch event {
            case .tick:
                draw()
            case .signalled(let sig):
                interruptedBy = sig
                break loop
            case .systemVolume(let v):
                screen.systemVolume = v
                draw()
            case .queue(let e):
                if handle(e) { break loop }
                draw()
            case .player:
                break
            case .key(let k):
                if handle(key: k) { break loop }
                draw()
            }
        }
        player.save()
        await recorder?.finish()
        player.stop()
        try? player.session?.setActive(false, options: .notifyOthersOnDeactivation)
        sharedFileOutput?.finish()
        if !interactive { Terminal.write("Done: \(played.count) played, \(failed) failed\n") }
        return failed > 0
    }

    /// Sets the queue (or restores the saved one) and the sound settings.
    private func configurePlayer() {
        var restored = false
        if settings.resume {
            do { restored = try player.restore() } catch { report("\(error); starting a new queue") }
            if !restored && files.isEmpty { report("no saved queue to resume") }
            if restored { appendNew(files) }
        }
        if !restored { player.setQueue(with: files.map { QueueItem(pathOrURL: $0, persistentID: libraryIDs[$0]) }) }
        if let v = settings.volume { player.volume = v }
        if let r = settings.repeatMode { player.repeatMode = r }
        if settings.shuffle && player.shuffleMode == .off { player.shuffleMode = .songs }
        player.queue.setReplayGain(settings.replayGain, preamp: settings.preamp)
        player.queue.crossfadeDuration = settings.crossfade
        settings.eq.apply(to: player.queue.eq)
        settings.effects.applyEQSettings(to: player.queue.eq)
        applyEffects()
        screen.volume = player.volume
        refreshQueueScreen()
        publish()
    }

    /// Appends to a resumed queue the files it does not hold yet (`play --resume DIR` run again
    /// does not add DIR's files a second time).
    private func appendNew(_ files: [String]) {
        var held = Set(player.queue.items().map { $0.url.standardized.absoluteString })
        for f in files {
            let item = QueueItem(pathOrURL: f, persistentID: libraryIDs[f])
            guard held.insert(item.url.standardized.absoluteString).inserted else { continue }
            player.queue.append(item)
        }
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
            if started { announce(item, index: index) }
        case .stateChanged(.interrupted):
            report("interrupted by another player; paused until it is done")
        case .stateChanged(let state):
            // The first start: the item that plays (earlier item events came from setting the
            // queue; the queue may already have moved on, so the events say which, not the player).
            if state == .playing && !started, let (item, i) = latest {
                started = true
                announce(item, index: i)
            }
        case .itemFailed(let index, _, let error):
            failed += 1
            screen.failed.insert(index)
            report("\(error)")
        case .decodeWarning(let w):
            report(w.description)
        case .seeked(let t):
            remote.didSeek(to: t)
        case .finished:
            return true
        case .outputLost(let reason):
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
            screen.volume = v
        case .ducked(let level):
            screen.message = level < 1 ? "another player asked to be heard over this one (ducked)" : nil
        case .repeatModeChanged(let r):
            screen.repeatMode = r
        case .shuffleModeChanged(let s):
            screen.shuffleMode = s
            refreshQueueScreen()
        case .queueChanged:
            refreshQueueScreen()
        case .itemPlayedToEnd:
            break
        }
        publish()
        return false
    }

    /// Shows the now-playing item (title, tags, format) and prints the plain line.
    private func announce(_ item: QueueItem, index: Int) {
        metadataFor = item.persistentID
        played.insert(item.persistentID)
        screen.message = nil
        screen.index = index
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
        } else {
            screen.title = item.url.lastPathComponent
            screen.artist = nil
            screen.album = nil
            screen.format = ""
            screen.duration = 0
        }
        lastPlainSecond = -1
        if !interactive {
            var line = "Playing \(index + 1)/\(screen.entries.count): \(screen.title)"
            if let a = screen.artist { line += " — \(a)" }
            Terminal.write(line + " [\(screen.format), \(formatTime(screen.duration))]\n")
        }
    }

    private func refreshQueueScreen() {
        screen.entries = player.queue.items().map { $0.url.lastPathComponent }
        screen.index = player.indexOfNowPlayingItem ?? 0
        screen.repeatMode = player.repeatMode
        screen.shuffleMode = player.shuffleMode
    }

    private func publish() {
        remote.update(RemoteBridge.State(
            item: player.nowPlayingItem, title: screen.title.isEmpty ? nil : screen.title, artist: screen.artist,
            album: screen.album, albumArtist: screen.albumArtist, artwork: screen.artwork,
            duration: screen.duration > 0 ? screen.duration : nil, elapsed: player.currentPlaybackTime,
            playing: player.playbackState, index: player.indexOfNowPlayingItem, count: screen.entries.count,
            volume: player.volume, repeatMode: player.repeatMode, shuffleMode: player.shuffleMode))
    }

    /// Carries out a key; true to quit.
    private func handle(key: Key) -> Bool {
        switch key {
        case .space:
            if player.playbackState == .playing { player.pause() } else { player.play() }
        case .left: player.currentPlaybackTime = max(0, player.currentPlaybackTime - 5)
        case .right: player.currentPlaybackTime = min(max(0, screen.duration - 0.5), player.currentPlaybackTime + 5)
        case .up: setVolume(player.volume + 0.05)
        case .down: setVolume(player.volume - 0.05)
        case .char("n"): player.skipToNextItem()
        case .char("p"): player.skipToPreviousItem()
        case .char("l"), .char("r"):
            switch player.repeatMode {
            case .none: player.repeatMode = .one
            case .one: player.repeatMode = .all
            case .all: player.repeatMode = .none
            }
        case .char("s"):
            player.shuffleMode = player.shuffleMode == .off ? .songs : .off
        case .char("]"), .char("["):
            // Speed in steps of 0.1 (pitch kept).
            let step: Float = key == .char("]") ? 0.1 : -0.1
            settings.rate = min(2, max(0.5, ((settings.rate + step) * 10).rounded() / 10))
            if let tp = timePitch { tp.rate = settings.rate } else { applyEffects() }
            screen.rate = settings.rate
        case .char("e"):
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
        case .char("q"), .char("Q"): return true
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
            Terminal.writeError(message)
        }
    }

    private func draw() {
        // Only the announced item's time: at a gapless change the queue is on the next item (its
        // time from 0) before its event has been handled, its title shown and its line printed.
        let announced = metadataFor != 0 && player.nowPlayingItem?.persistentID == metadataFor
        if announced { screen.elapsed = player.currentPlaybackTime }
        switch player.playbackState {
        case .playing: screen.status = .playing
        case .paused, .interrupted: screen.status = .paused
        case .stopped: screen.status = .stopped
        }
        if interactive {
            Terminal.write("\u{1B}[H\u{1B}[J" + LiveScreen.render(screen, width: Terminal.width))
        } else if player.playbackState == .playing && announced {
            let sec = Int(screen.elapsed)
            if sec / 5 != lastPlainSecond / 5 || lastPlainSecond < 0 {
                lastPlainSecond = sec
                Terminal.write("  \(formatTime(screen.elapsed)) / \(formatTime(screen.duration))\n")
            }
        }
    }
}

extension PlaySession {
    /// The EQ and speed the session ended with, for `--resume` (the volume is saved with the queue).
    var settingsToRemember: SavedPlaybackSettings {
        SavedPlaybackSettings(eq: settings.eq.description, rate: settings.rate)
    }
}
