// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Glibc
import Tonearm
import TonearmMPDClient

/// `tonearm remote screen`: `tonearm play`'s live screen attached to the running daemon
/// (issue 20). The same screen (``LiveScreen``) and the same keys, carried out as MPD
/// commands; what it shows comes from the daemon's `idle` events on a connection of their own
/// (no polling): on each change the status (and the queue's changed songs, by `plchanges`) is
/// read once, and between changes the time is extrapolated from the status's elapsed time and
/// state, as the local screen reads its clock. Quitting leaves the daemon playing.
struct RemoteScreen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen",
        abstract: "The live play screen of tonearm play, attached to the daemon (quitting leaves it playing).",
        discussion: """
            The keys are the play screen's (space pause, ←/→ seek, ↑/↓ volume, n/p next/previous, \
            r repeat, s shuffle, Tab the queue: ↑/↓ move, Enter play, d remove, K/J reorder; ? \
            the keys; q quits and the daemon plays on). EQ, speed and the library picker are the \
            local player's and are not bound here.

            Examples:
              tonearm remote screen
              tonearm remote screen --host 127.0.0.1:6600
            """)
    @OptionGroup var remote: RemoteOptions

    func run() async throws {
        guard isatty(1) == 1, isatty(0) == 1 else {
            throw CommandFailure(nil, "the screen needs a terminal (scripts: tonearm remote status, tonearm remote idle --loop)", status: 64)
        }
        let commands = try await remote.connect()
        let events = try await RemoteOptions.connect(to: remote.address, password: remote.effectivePassword)
        defer {
            events.close()
            commands.close()
        }
        let session = RemoteScreenSession(commands: commands, events: events)
        if let failure = await session.run() { throw failure }
    }
}

/// The screen's state kept from the daemon's answers, and what a key sends (a pure part,
/// tested without a daemon).
struct RemoteScreenModel {
    var status = MPDStatus(MPDReply())
    /// When ``status`` was read (the time is extrapolated from it while playing).
    var statusRead = ContinuousClock.now
    /// The queue in its order (MPD's positions).
    var songs: [MPDSong] = []
    /// The volume before `m` muted (nil: not muted).
    var mutedVolume: Int?

    /// The keys of `tonearm play` without those of the local player only (EQ, speed, the picker).
    static let keys: KeyBindings = (try? KeyBindings(overrides: ["eq-next": [], "slower": [], "faster": [], "add": []])) ?? .defaults

    /// Takes a `status` and the `plchanges` answer since the queue version last seen: the
    /// changed songs replace (or extend) the list at their positions; the list is cut to the
    /// queue's length.
    mutating func apply(status new: MPDStatus, changes: [MPDSong], at instant: ContinuousClock.Instant) {
        for song in changes {
            guard let p = song.position, p >= 0 else { continue }
            if p < songs.count { songs[p] = song } else if p == songs.count { songs.append(song) }
        }
        if songs.count > new.playlistLength { songs.removeLast(songs.count - new.playlistLength) }
        status = new
        statusRead = instant
        if let v = new.volume, v > 0 { mutedVolume = nil }
    }

    /// The playing time now: the status's, plus the time since it was read while playing
    /// (at most the duration).
    func elapsed(at instant: ContinuousClock.Instant) -> Double {
        var e = status.elapsed ?? Double(status.timeElapsed ?? 0)
        if status.state == .play {
            let d = statusRead.duration(to: instant)
            e += Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }
        if let total = duration, total > 0 { e = min(e, total) }
        return max(0, e)
    }

    var current: MPDSong? { status.song.flatMap { songs.indices.contains($0) ? songs[$0] : nil } }
    var duration: Double? { status.duration ?? current?.duration ?? status.timeTotal.map(Double.init) }

    var repeatMode: RepeatMode { status.repeatMode ? (status.single == "1" ? .one : .all) : .none }

    /// What the screen shows (`base` keeps the cursor, the help and the message).
    func screen(_ base: ScreenState, output: String, at instant: ContinuousClock.Instant) -> ScreenState {
        var s = base
        switch status.state {
        case .play: s.status = .playing
        case .pause: s.status = .paused
        case .stop: s.status = .stopped
        }
        let song = current
        s.title = song.map { $0.title ?? $0.name ?? ($0.file as NSString).lastPathComponent } ?? ""
        s.artist = song?.artist
        s.album = song?.album
        s.albumArtist = song?.tag("AlbumArtist")
        // While stopped MPD sends no `audio`: the song's own `Format` then.
        s.format = [(status.audioFormat ?? song?.format).map { Self.format($0) }, status.bitrate.flatMap { $0 > 0 ? "\($0) kb/s" : nil }]
            .compactMap { $0 }.joined(separator: " · ")
        s.elapsed = song == nil ? 0 : elapsed(at: instant)
        s.duration = duration ?? 0
        s.isLive = song != nil && duration == nil && (song?.file.contains("://") ?? false)
        s.muted = mutedVolume != nil
        s.volume = Float(mutedVolume ?? status.volume ?? 0) / 100
        s.repeatMode = repeatMode
        s.shuffleMode = status.random ? .songs : .off
        s.eq = "—"
        s.output = output
        s.queue = songs.map { ScreenState.QueueRow(title: $0.title ?? $0.name ?? ($0.file as NSString).lastPathComponent, artist: $0.artist) }
        s.current = status.song.flatMap { songs.indices.contains($0) ? $0 : nil }
        if let c = s.cursor { s.cursor = songs.isEmpty ? nil : min(c, songs.count - 1) }
        s.keys = Self.keys
        return s
    }

    /// MPD's `44100:16:2` as the screen says a format: `44.1 kHz · 16 bit · stereo`.
    static func format(_ f: String) -> String {
        let parts = f.split(separator: ":").map(String.init)
        guard parts.count == 3, let rate = Double(parts[0]) else { return f }
        let khz = rate / 1000
        let r = khz == khz.rounded() ? "\(Int(khz)) kHz" : String(format: "%.1f kHz", khz)
        let bits = parts[1] == "f" ? "float" : "\(parts[1]) bit"
        let ch = ["1": "mono", "2": "stereo"][parts[2]] ?? "\(parts[2]) ch"
        return "\(r) · \(bits) · \(ch)"
    }

    /// The MPD commands a key's action sends (none: the screen handles it, or nothing to do).
    /// `cursor` is the queue's row under the cursor.
    mutating func commands(for action: KeyAction, cursor: Int?, at instant: ContinuousClock.Instant) -> [(command: String, arguments: [String])] {
        let volume = mutedVolume ?? status.volume ?? 0
        switch action {
        case .pause:
            switch status.state {
            case .play: return [("pause", ["1"])]
            case .pause: return [("pause", ["0"])]
            case .stop: return [("play", [])]
            }
        case .seekBack, .seekForward:
            guard status.state != .stop else { return [] }
            var to = elapsed(at: instant) + (action == .seekForward ? 5 : -5)
            if let d = duration, d > 0 { to = min(to, max(0, d - 0.5)) }
            return [("seekcur", [String(format: "%.3f", max(0, to))])]
        case .restart:
            return status.state == .stop ? [] : [("seekcur", ["0"])]
        case .volumeUp, .volumeDown:
            guard status.volume != nil else { return [] }
            let v = max(0, min(100, (volume + (action == .volumeUp ? 5 : -5)) / 5 * 5))
            mutedVolume = nil
            return [("setvol", [String(v)])]
        case .mute:
            guard status.volume != nil else { return [] }
            if let v = mutedVolume {
                mutedVolume = nil
                return [("setvol", [String(v)])]
            }
            mutedVolume = volume
            return [("setvol", ["0"])]
        case .next: return [("next", [])]
        case .previous: return [("previous", [])]
        case .repeat:
            // off → one → all → off, as the local screen.
            switch repeatMode {
            case .none: return [("repeat", ["1"]), ("single", ["1"])]
            case .one: return [("single", ["0"])]
            case .all: return [("repeat", ["0"]), ("single", ["0"])]
            }
        case .shuffle: return [("random", [status.random ? "0" : "1"])]
        case .queuePlay:
            guard let c = cursor, songs.indices.contains(c) else { return [] }
            return [("play", [String(c)])]
        case .queueRemove:
            guard let c = cursor, songs.indices.contains(c) else { return [] }
            return [("delete", [String(c)])]
        case .queueMoveUp, .queueMoveDown:
            guard let c = cursor, songs.indices.contains(c) else { return [] }
            let to = c + (action == .queueMoveUp ? -1 : 1)
            guard songs.indices.contains(to) else { return [] }
            return [("move", [String(c), String(to)])]
        case .eqNext, .slower, .faster, .add, .help, .quit, .focusQueue, .queueUp, .queueDown:
            return []
        }
    }
}

/// The screen's loop: keys, signals, the daemon's changes and the redraw ticks, one at a time.
final class RemoteScreenSession {
    private let commands: MPDClient
    private let events: MPDClient
    private let terminal = Terminal(drawsScreen: true)
    private var model = RemoteScreenModel()
    private var screen = ScreenState()
    private var size = (columns: 80, rows: 24)
    private var queueVersion: UInt64 = 0
    private var first = true

    init(commands: MPDClient, events: MPDClient) {
        self.commands = commands
        self.events = events
        screen.color = ScreenState.colorAllowed()
        screen.keys = RemoteScreenModel.keys
    }

    /// Runs until `q` or a signal; a failure when the daemon went away or refused to answer.
    func run() async -> CommandFailure? {
        let (stream, continuation) = AsyncStream<SessionEvent>.makeStream()
        // The first state before anything is drawn.
        if let failure = await refresh() { return failure }
        let reader = SessionInput.startReader(signals: [SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGWINCH], readsInput: true, continuation)
        terminal.enter()
        size = Terminal.size(of: terminal.output)
        let changes = events.changes()
        let pump = Task {
            do {
                for try await c in changes { continuation.yield(.daemon(c)) }
                continuation.yield(.daemonGone(nil))
            } catch {
                continuation.yield(.daemonGone("\(error)"))
            }
        }
        // The screen is redrawn five times a second (the time moves on between the daemon's
        // events); the daemon is asked nothing then.
        let ticker = SessionInput.startTicker(continuation, every: .milliseconds(200))
        defer {
            ticker.cancel()
            pump.cancel()
            terminal.restore()
            reader.stop()
        }
        var ticks = 0
        var failure: CommandFailure?
        draw()
        loop: for await event in stream {
            switch event {
            case .tick:
                ticks += 1
                if ticks % 5 == 0 { terminal.invalidate() }
            case .resized:
                size = Terminal.size(of: terminal.output)
                terminal.invalidate()
            case .signalled:
                break loop
            case .suspend:
                terminal.suspend()
                size = Terminal.size(of: terminal.output)
                terminal.invalidate()
            case .continued:
                if terminal.resumeIfForeground() {
                    size = Terminal.size(of: terminal.output)
                    terminal.invalidate()
                }
            case .daemon:
                if let f = await refresh() {
                    failure = f
                    break loop
                }
            case .daemonGone(let why):
                failure = CommandFailure(nil, "the daemon at \(commands.address) went away\(why.map { " (\($0))" } ?? "")")
                break loop
            case .keyName(let k):
                if await handle(key: k) { break loop }
            case .queue, .player, .systemVolume, .remote, .videoWindowClosed, .videoNote, .videoControl:
                break
            }
            draw()
        }
        return failure
    }

    /// Reads the status and the queue's changes since the version last seen (one command list).
    private func refresh() async -> CommandFailure? {
        do {
            let replies = try await commands.sendList([("status", []), ("plchanges", [String(first ? 0 : queueVersion)])])
            let status = MPDStatus(replies[0])
            model.apply(status: status, changes: MPDSong.list(replies[1]), at: .now)
            queueVersion = status.playlistVersion
            first = false
            if let e = status.error { screen.message = e }
            return nil
        } catch {
            return RemoteOptions.failure(error)
        }
    }

    /// A key: what it does on the screen, or the commands it sends. True: quit.
    private func handle(key: String) async -> Bool {
        if screen.showsHelp {
            screen.showsHelp = false
            return false
        }
        guard let action = screen.keys.action(for: key, queueFocused: screen.cursor != nil) else { return false }
        switch action {
        case .quit: return true
        case .help: screen.showsHelp = true
        case .focusQueue:
            screen.cursor = screen.cursor == nil && !model.songs.isEmpty ? (model.status.song ?? 0) : nil
        case .queueUp, .queueDown:
            guard let c = screen.cursor, !model.songs.isEmpty else { break }
            screen.cursor = min(max(0, c + (action == .queueUp ? -1 : 1)), model.songs.count - 1)
        default:
            let cursor = screen.cursor
            let list = model.commands(for: action, cursor: cursor, at: .now)
            guard !list.isEmpty else { break }
            do {
                _ = try await commands.sendList(list)
                screen.message = nil
                // The state the command made, before the next key (two keys typed at once: the
                // second one acts on what the first one did, not on the idle event still to come).
                if let failure = await refresh() { screen.message = failure.reason }
                if action == .queueMoveUp || action == .queueMoveDown, let c = cursor {
                    screen.cursor = c + (action == .queueMoveUp ? -1 : 1)
                }
            } catch {
                screen.message = "\(RemoteOptions.failure(error).reason)"
            }
        }
        return false
    }

    private func draw() {
        screen = model.screen(screen, output: "daemon \(commands.address)", at: .now)
        let lines = LiveScreen.lines(screen, width: size.columns, height: size.rows)
        terminal.drawFrame("\u{1B}[H" + lines.joined(separator: "\u{1B}[K\n") + "\u{1B}[K\u{1B}[J")
    }
}
