// SPDX-License-Identifier: GPL-3.0-or-later
import Dispatch
import Foundation
import Synchronization
import TonearmCodecs
import TonearmCore
import TonearmDSP
import TonearmMPDProtocol
import TonearmPlayback

/// Who wants to hear about changed subsystems (each connection, for `idle`): a callback per
/// subscriber, called on the poster's thread (a connection hops to its event loop).
public final class MPDIdleHub: Sendable {
    private let subscribers = Mutex<(next: UInt64, all: [UInt64: @Sendable (Set<MPDSubsystem>) -> Void])>((1, [:]))

    public init() {}

    public func subscribe(_ callback: @escaping @Sendable (Set<MPDSubsystem>) -> Void) -> UInt64 {
        subscribers.withLock { s in
            let id = s.next
            s.next += 1
            s.all[id] = callback
            return id
        }
    }

    public func unsubscribe(_ id: UInt64) {
        _ = subscribers.withLock { $0.all.removeValue(forKey: id) }
    }

    /// Tells one subscriber only (`message` for the connections a message was sent to).
    public func post(_ changed: Set<MPDSubsystem>, to id: UInt64) {
        guard !changed.isEmpty, let callback = subscribers.withLock({ $0.all[id] }) else { return }
        callback(changed)
    }

    public func post(_ changed: Set<MPDSubsystem>) {
        guard !changed.isEmpty else { return }
        let callbacks = subscribers.withLock { Array($0.all.values) }
        for c in callbacks { c(changed) }
    }

    public var count: Int { subscribers.withLock { $0.all.count } }

    private let idlers = Mutex(0)
    private let idlerCounts = EventBroadcaster<Int>()

    /// Connections waiting in `idle` now.
    public var idleCount: Int { idlers.withLock { $0 } }

    /// The number of idling connections each time it changes (from the call on).
    public var idleCountChanges: AsyncStream<Int> { idlerCounts.stream(bufferingNewest: 64) }

    func idleChanged(by delta: Int) {
        let n = idlers.withLock { c in
            c += delta
            return c
        }
        idlerCounts.yield(n)
    }
}

/// The answer to a batch of lines (one command or a command list).
public struct MPDBatchResult: Sendable {
    /// The answer while it is text only; once a binary answer joined it, the start of the
    /// answer is in ``bytes`` and this holds what came after the last binary part.
    public var text: String
    public var client: MPDClientContext
    /// The client sent `close` (or the batch asks the connection to end).
    public var close: Bool
    /// The answer up to and with its last binary part (`albumart`, `readpicture`), nil while it
    /// has none: the whole answer is then ``bytes`` followed by ``text``.
    public var bytes: [UInt8]?

    public init(text: String, client: MPDClientContext, close: Bool) {
        self.text = text
        self.client = client
        self.close = close
    }

    /// Appends raw bytes (a picture's chunk, or text already written as bytes) after what the
    /// answer has so far.
    mutating func append(binary: [UInt8]) {
        if bytes == nil, text.isEmpty {
            bytes = binary
            return
        }
        var b = bytes ?? []
        b.append(contentsOf: text.utf8)
        b.append(contentsOf: binary)
        bytes = b
        text = ""
    }

    /// The whole answer as sent.
    public var data: [UInt8] { (bytes ?? []) + Array(text.utf8) }
}

/// The daemon's core: one ``MusicPlayer`` (one queue) and the ``MPDCommandMachine`` that MPD
/// commands drive, on one serial queue (MPD's commands run one at a time, in arrival order,
/// whichever connection sent them), and the ``MPDIdleHub`` the connections hear changes from.
/// The player's own events (the next song by itself, the queue's end) come back here too.
///
/// Threading: ``execute(_:client:completion:)`` may be called from any thread; commands run on
/// the daemon's queue, never on a network event loop (a `play` waits for the output to start).
public final class MPDDaemon: Sendable {
    public let player: MusicPlayer
    public let hub = MPDIdleHub()
    public let database: (any MPDDatabaseResponder)?
    /// Folders a relative URI (`add Artist/song.flac`) is found in, until the library answers.
    public let musicDirectories: [String]
    /// Where the MPD side of the state is saved (URIs, play state, the modes the queue does not
    /// keep); the queue, position, volume, repeat and shuffle are in the player's store.
    public let stateFile: String?
    private let queue = DispatchQueue(label: "tonearm.daemon.commands")
    /// Gives freed heap back to the system after large work (one `malloc_trim` a moment after
    /// a burst of it; nothing runs while the daemon is idle).
    let trimmer = MemoryTrimmer()
    private let machine: Mutex<MPDCommandMachine>
    /// Who may do what (`password`, MPD's default permissions).
    public let access: MPDAccess
    private let pump = Mutex<Task<Void, Never>?>(nil)
    /// False once shut down: the stop that follows is not saved (a restart plays on).
    private let saving = Mutex(true)
    /// The database's updates and watch (`update`, `rescan`; nil: the database has none).
    public var updater: (any MPDDatabaseUpdater)? { database as? any MPDDatabaseUpdater }
    /// The update jobs, run one after another by ``updateTask``.
    private let updateJobs: AsyncStream<(job: Int, uri: String, rescan: Bool)>.Continuation
    private let updateTask = Mutex<Task<Void, Never>?>(nil)
    private let watchTask = Mutex<Task<Void, Never>?>(nil)
    /// The update job of the watch's batch being read (set and taken on the daemon's queue).
    private let watchJob = Mutex<Int?>(nil)
    /// The outputs' switches and the stream title (``DaemonOutputs``); nil: output 0 only.
    public let outputControl: DaemonOutputs?
    /// The play state the connections were last told of with `player` (set and read on the
    /// daemon's queue). The player reports its state changes through its event stream, later than
    /// the command that made them: a `stop` answered and announced is not announced again when the
    /// player's own `stateChanged(.stopped)` comes, nor is an older state's event that comes after
    /// it — MPD raises `player` once, with the change, and a client that connected after it hears
    /// nothing.
    private let toldState = Mutex<PlaybackState?>(nil)

    /// With `stateFile` (and a player made with a ``QueueStateStore``), every change is saved
    /// before its answer is sent, and ``restore()`` picks up where a previous daemon was —
    /// also after SIGKILL.
    public init(player: MusicPlayer, database: (any MPDDatabaseResponder)? = nil, musicDirectories: [String] = [],
                stateFile: String? = nil, output: MPDOutput = MPDOutput(name: "default", plugin: "tonearm"),
                access: MPDAccess = .open, outputs: DaemonOutputs? = nil) {
        self.player = player
        outputControl = outputs
        self.access = access
        machine = Mutex(MPDCommandMachine(access: access))
        self.database = database
        self.musicDirectories = musicDirectories
        self.stateFile = stateFile
        machine.withLock { m in
            if let outputs { m.outputs = outputs.listed } else { m.output = output }
            m.musicDirectory = musicDirectories.first
            m.equalizerPresets = EQPreset.all.map(\.name)
        }
        let (jobs, continuation) = AsyncStream<(job: Int, uri: String, rescan: Bool)>.makeStream()
        updateJobs = continuation
        let events = player.events
        let task = Task.detached { [weak self] in
            for await e in events {
                guard let self else { return }
                self.queue.async { self.playerEvent(e) }
            }
        }
        pump.withLock { $0 = task }
        if let updater = database as? any MPDDatabaseUpdater {
            let runner = Task.detached { [weak self] in
                for await j in jobs {
                    let changed = await updater.update(uri: j.uri, rescan: j.rescan)
                    guard let self else { return }
                    self.queue.async {
                        let subsystems = self.machine.withLock { $0.updateFinished(job: j.job, changed: changed) }
                        self.announce(subsystems)
                    }
                }
            }
            updateTask.withLock { $0 = runner }
        }
    }

    deinit {
        pump.withLock { $0?.cancel() }
        updateJobs.finish()
        updateTask.withLock { $0?.cancel() }
        watchTask.withLock { $0?.cancel() }
    }

    /// Watches the music folders (the database's ``MPDDatabaseUpdater/watchFolders(batches:)``)
    /// until shutdown: each batch of files added, removed or renamed there is an update job, as
    /// MPD's inotify makes one — `updating_db` in `status` while it runs, idle `update` when it
    /// starts and ends, `database` when it changed the database. Does nothing without an
    /// updater. `failed` is called once if watching fails or stops.
    public func startWatching(failed: @escaping @Sendable (any Error) -> Void) {
        guard let updater else { return }
        let task = Task.detached { [weak self] in
            do {
                try await updater.watchFolders { [weak self] batch in
                    guard let self else { return }
                    self.queue.async { self.watchBatch(batch) }
                }
            } catch is CancellationError {
            } catch {
                if self != nil, !Task.isCancelled { failed(error) }
            }
            // A batch cut short ends its job.
            guard let self else { return }
            self.queue.async { self.watchBatch(.finished(changed: false)) }
        }
        watchTask.withLock { $0?.cancel(); $0 = task }
    }

    /// On the daemon's queue: a watch batch started or ended.
    private func watchBatch(_ batch: MPDWatchBatch) {
        switch batch {
        case .started:
            let (job, changed) = machine.withLock { $0.watchJobStarted() }
            watchJob.withLock { $0 = job }
            announce(changed)
        case .finished(let changed):
            if let job = watchJob.withLock({ r in defer { r = nil }; return r }) {
                announce(machine.withLock { $0.updateFinished(job: job, changed: changed) })
            } else if changed {
                announce([.database])
            }
        }
    }

    /// Saves the state a last time, stops playing and lets go of the player's events
    /// (shutdown). A restart resumes as it was (playing on when it played).
    public func shutdown() {
        queue.sync {
            persist()
            saving.withLock { $0 = false }
            player.finishSaving()
            player.stop()
        }
        pump.withLock { $0?.cancel() }
        updateJobs.finish()
        updateTask.withLock { $0?.cancel() }
        watchTask.withLock { $0?.cancel() }
    }

    /// The MPD side of the state as last written (nil: not yet): an unchanged one is not
    /// written again (a song change changes none of it).
    private let lastSaved = Mutex<SavedState?>(nil)
    /// MPD-side state files written (tests).
    var stateWrites: Int { stateWriteCount.withLock { $0 } }
    private let stateWriteCount = Mutex(0)

    /// The MPD side of the saved state.
    struct SavedState: Codable, Equatable {
        var uris: [String]
        var playing: Bool
        var consume: Bool
        var single: String
        var crossfade: Int
        /// `disableoutput` (nil in states saved before outputs could be disabled).
        var outputEnabled: Bool?
        /// Each output's `enableoutput` state by name (nil in states saved before several outputs).
        var outputs: [String: Bool]?
        /// The equalizer's preset (nil in states saved before the daemon had one).
        var equalizer: String?
    }

    /// Restores the queue, position, volume and modes a previous daemon saved, and plays on
    /// when it was playing. False when nothing was saved.
    @discardableResult
    public func restore() throws -> Bool {
        try queue.sync { () throws -> Bool in
            guard try player.restore() else { return false }
            var saved: SavedState?
            if let stateFile, let data = FileManager.default.contents(atPath: stateFile) {
                saved = try? JSONDecoder().decode(SavedState.self, from: data)
            }
            let items = player.queue.items()
            let uris = saved?.uris.count == items.count ? saved?.uris : nil
            let songs = items.enumerated().map { i, item in
                let uri = uris?[i] ?? item.path
                return item.isRemote ? MPDSong(uri: uri, location: item.path) : Self.probe(path: item.path, uri: uri)
            }
            let q = player.queue
            let single = saved.flatMap { MPDArguments.SingleMode(rawValue: $0.single) } ?? (q.repeatMode == .one ? .on : .off)
            machine.withLock {
                $0.restore(songs: songs, volume: Int((player.volume * 100).rounded()), isRepeat: q.repeatMode != .none,
                           isRandom: q.shuffleMode != .off, single: single, consume: saved?.consume ?? false,
                           crossfade: saved?.crossfade ?? 0, outputEnabled: saved?.outputEnabled ?? true,
                           priorities: q.playOrder.priorities, ranges: items.map(\.range))
                if let o = saved?.outputs { $0.restoreOutputs(o) }
                if let e = saved?.equalizer { $0.restoreEqualizer(e) }
            }
            if let e = saved?.equalizer, let preset = EQPreset.all.first(where: { $0.name == e }) { q.eq.apply(preset) }
            syncOutputs()
            if let c = saved?.crossfade, c > 0 { q.crossfadeDuration = Double(c) }
            if saved?.playing == true, machine.withLock({ $0.outputEnabled }) { player.play() }
            return true
        }
    }

    /// Gives the outputs the machine's enabled states (after a restore).
    private func syncOutputs() {
        guard let outputControl else { return }
        for (i, e) in machine.withLock({ $0.enabledOutputs }).enumerated() { outputControl.setEnabled(i, e) }
    }

    /// The stream outputs' title: `Artist - Title` of the current song (its file name without tags).
    private func updateTitle() {
        guard let outputControl else { return }
        let index = player.queue.currentIndex
        let song = machine.withLock { m in index.flatMap { $0 >= 0 && $0 < m.songs.count ? m.songs[$0] : nil } }
        guard let song else { return }
        let artist = song.tags.first { $0.0 == .artist }?.1
        let title = song.tags.first { $0.0 == .title }?.1
        let text = switch (artist, title) {
        case let (a?, t?): "\(a) - \(t)"
        case let (nil, t?): t
        default: (song.uri as NSString).lastPathComponent
        }
        outputControl.setTitle(text, artist: artist, title: title)
    }

    /// Saves now (on the daemon's queue): the player's store, then the MPD side.
    private func persist() {
        guard let stateFile, saving.withLock({ $0 }) else { return }
        player.save()
        let (uris, consume, single, crossfade, enabled, outputs, equalizer) = machine.withLock { m in
            (m.songs.map(\.uri), m.consume, m.single.rawValue, m.crossfade, m.outputEnabled,
             Dictionary(zip(m.outputs.map(\.name), m.enabledOutputs), uniquingKeysWith: { a, _ in a }), m.equalizer)
        }
        let state = SavedState(uris: uris, playing: player.playbackState == .playing, consume: consume, single: single, crossfade: crossfade,
                               outputEnabled: enabled, outputs: outputs, equalizer: equalizer)
        // Only what changed is written: the player's store writes the place alone when the
        // queue is the same, and the MPD side not at all when it is the same.
        guard lastSaved.withLock({ $0 }) != state, let data = try? JSONEncoder().encode(state) else { return }
        lastSaved.withLock { $0 = nil }
        stateWriteCount.withLock { $0 += 1 }
        let temp = stateFile + ".tmp"
        do {
            try FileManager.default.createDirectory(atPath: (stateFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: temp))
            if rename(temp, stateFile) == 0 { lastSaved.withLock { $0 = state } }
        } catch {
            try? FileManager.default.removeItem(atPath: temp)
        }
    }

    /// Tests: handles `event` on the daemon's queue as if the player had sent it now.
    func handlePlayerEventForTesting(_ event: QueuePlayerEvent) { queue.sync { playerEvent(event) } }

    /// Tests: the outputs the MPD side lists, with no drivers behind them.
    func setListedOutputs(_ outputs: [MPDOutput]) { machine.withLock { $0.outputs = outputs } }

    /// The equalizer's presets (`outputset N equalizer NAME` takes these names).
    public var equalizerPresets: [String] { machine.withLock { $0.equalizerPresets } }

    /// Called once by `kill` (the daemon is to stop; the runner shuts down gracefully).
    public let onKill = Mutex<(@Sendable () -> Void)?>(nil)

    /// The connection `connection` (its ``MPDClientContext/connection``) ended: its channels
    /// and unread messages go.
    public func connectionClosed(_ connection: UInt64) {
        queue.async {
            let changed = self.machine.withLock { $0.connectionClosed(connection) }
            self.announce(changed)
        }
    }

    /// Runs `batch` on the daemon's queue and calls `completion` there with the answer.
    public func execute(_ batch: MPDRequestFramer.Batch, client: MPDClientContext,
                        completion: @escaping @Sendable (MPDBatchResult) -> Void) {
        if Self.runsInline(batch) {
            completion(run(batch, client: client))
            return
        }
        queue.async { completion(self.run(batch, client: client)) }
    }

    /// `batch`'s answer now, on the caller's thread, when it is one of ``inlineCommands``;
    /// nil otherwise (then ``execute(_:client:completion:)`` runs it on the daemon's queue).
    public func executeInline(_ batch: MPDRequestFramer.Batch, client: MPDClientContext) -> MPDBatchResult? {
        Self.runsInline(batch) ? run(batch, client: client) : nil
    }

    /// Commands that only read the queue's state (the machine under its lock, the player's
    /// thread-safe properties) and change nothing: run on the caller's thread (the connection's
    /// event loop), without the hop to the command queue and back — a `status` round trip is
    /// then one thread's work, as in MPD. A connection sends its next batch only after this
    /// one's answer, and a change a client was told of has already happened, so the answers
    /// are the same as on the queue.
    public static let inlineCommands: Set<String> = [
        "status", "currentsong", "ping", "playlistinfo", "playlistid", "playlist", "plchanges", "plchangesposid",
    ]

    /// Whether `batch` is one command of ``inlineCommands`` (a command list goes to the queue).
    static func runsInline(_ batch: MPDRequestFramer.Batch) -> Bool {
        guard batch.mode == .single, batch.lines.count == 1 else { return false }
        let line = batch.lines[0]
        let end = line.firstIndex { $0 == 0x20 || $0 == 0x09 } ?? line.endIndex
        guard end - line.startIndex <= 16 else { return false }
        return inlineCommands.contains(String(decoding: line[line.startIndex..<end], as: UTF8.self))
    }

    /// Runs `batch` now on the caller's thread (tests, and the queue itself).
    public func executeNow(_ batch: MPDRequestFramer.Batch, client: MPDClientContext) -> MPDBatchResult {
        queue.sync { run(batch, client: client) }
    }

    private func run(_ batch: MPDRequestFramer.Batch, client: MPDClientContext) -> MPDBatchResult {
        var result = MPDBatchResult(text: "", client: client, close: false)
        var changed = Set<MPDSubsystem>()
        var notify: [UInt64: Set<MPDSubsystem>] = [:]
        defer {
            // Saved before the answer goes out: what a client was told is what a restart finds.
            if !changed.isEmpty { persist() }
            announce(changed)
            for (id, subsystems) in notify { hub.post(subsystems, to: id) }
            // A queue or database edit, or a long answer, leaves freed heap behind: returned
            // to the system a moment after (once the answer has been written).
            if !changed.isDisjoint(with: [.playlist, .database, .storedPlaylist])
                || result.text.utf8.count + (result.bytes?.count ?? 0) >= MemoryTrimmer.largeAnswer {
                trimmer.request()
            }
        }
        for (i, line) in batch.lines.enumerated() {
            let request: MPDRequest
            do {
                request = try MPDRequest(line: line)
                _ = try MPDCommands.check(request, permissions: result.client.permissions)
            } catch {
                result.text += error.at(i, command: "").line + "\n"
                return result
            }
            if request.command == "close" {
                result.close = true
                return result
            }
            do {
                let outcome = try handle(request, client: result.client)
                if !outcome.bytes.isEmpty { result.append(binary: outcome.bytes) }
                result.text += outcome.response
                if let binary = outcome.binary { result.append(binary: binary + [10]) }
                result.client = outcome.client
                changed.formUnion(outcome.changed)
                notify.merge(outcome.notify) { $0.union($1) }
                if outcome.kill {
                    // MPD answers nothing to `kill`: it ends.
                    result.close = true
                    if let kill = onKill.withLock({ f in defer { f = nil }; return f }) { kill() }
                    return result
                }
            } catch {
                result.text += error.at(i, command: request.command).line + "\n"
                return result
            }
            if batch.mode == .list(ok: true) { result.text += MPDResponse.listOK }
        }
        result.text += MPDResponse.ok
        return result
    }

    private func handle(_ request: MPDRequest, client: MPDClientContext) throws(MPDAck) -> MPDOutcome {
        if request.command == "readcomments" { return try readComments(request.arguments[0], client: client) }
        let snapshot = playerSnapshot()
        let outcome = try machine.withLock { m throws(MPDAck) in
            try m.handle(request, client: client, player: snapshot, database: database) { uri, client throws(MPDAck) in
                try self.resolve(uri, client: client, command: request.command)
            }
        }
        apply(outcome.actions)
        var answer = outcome
        if outcome.actions.contains(where: { if case .play = $0 { true } else { false } }), let started = songStarted() {
            answer.changed.formUnion(started)
        }
        return answer
    }

    /// The current song started playing: its priority goes back to 0 (MPD's `SongStarted`).
    private func songStarted() -> Set<MPDSubsystem>? {
        guard player.playbackState == .playing, let index = player.queue.currentIndex,
              let outcome = machine.withLock({ $0.songStarted(position: index) }) else { return nil }
        apply(outcome.actions)
        return outcome.changed
    }

    func playerSnapshot() -> MPDPlayerSnapshot {
        let q = player.queue
        // A start under way (a stream connecting) is MPD's `play` already: MPD answers `play`
        // as soon as the command is taken, and `stop` again if the stream cannot be opened.
        let state: MPDPlayerSnapshot.State = switch q.playbackState {
        case _ where q.isStarting: .play
        case .playing: .play
        case .paused, .interrupted: .pause
        case .stopped: .stop
        }
        return MPDPlayerSnapshot(state: state, position: q.currentIndex, elapsed: state == .stop ? 0 : q.currentTime,
                                 duration: q.currentDuration, next: q.shuffleMode != .off ? q.upcomingIndex : nil,
                                 first: q.shuffleMode != .off ? q.firstInPlayOrder : nil,
                                 orderPosition: q.shuffleMode != .off ? q.playOrderPosition : nil)
    }

    private func apply(_ actions: [MPDPlayerAction]) {
        let q = player.queue
        let outputEnabled = machine.withLock { $0.outputEnabled }
        for a in actions {
            switch a {
            case .insert(let song, let at):
                // A song of the library carries its persistentID (plays are counted by it).
                let id = song.location.hasPrefix("/") ? database?.persistentID(forLocalPath: song.location) : nil
                q.insert(QueueItem(pathOrURL: song.location, persistentID: id), at: at)
            case .remove(let at): q.remove(at: at)
            case .move(let from, let to): q.move(from: from, to: to)
            case .clear: q.setQueue([])
            case .play(let position, let seconds) where !outputEnabled:
                // Nothing sounds without an output: the song and place are taken, not played.
                if let position, position != q.currentIndex { q.skipToItem(at: position) }
                if let seconds, q.playbackState != .stopped { q.seek(to: seconds) }
            case .play(let position, let seconds):
                if let position, position != q.currentIndex || q.playbackState == .stopped { q.skipToItem(at: position) }
                player.play()
                if let seconds { q.seek(to: seconds) }
            case .pause: player.pause()
            case .stop: player.stop()
            case .next: q.advanceToNextItem()
            case .previous: q.skipToPreviousItem()
            case .seek(let s): q.seek(to: s)
            case .volume(let v): player.volume = Float(v) / 100
            case .repeatMode(let r, let single): q.repeatMode = single && r ? .one : (r ? .all : .none)
            case .random(let on): q.shuffleMode = on ? .songs : .off
            case .crossfade(let s): q.crossfadeDuration = Double(s)
            case .update(let job, let uri, let rescan): updateJobs.yield((job, uri, rescan))
            case .output(let id, let enabled):
                outputControl?.setEnabled(id, enabled)
                if !machine.withLock({ $0.outputEnabled }), player.playbackState == .playing { player.pause() }
            case .replayGain(let mode): q.setReplayGain(ReplayGainMode(rawValue: mode) ?? .off)
            case .equalizer(let name):
                if let preset = EQPreset.all.first(where: { $0.name == name }) { q.eq.apply(preset) }
            case .priority(let priority, let positions, let afterCurrent):
                q.setPriority(priority, ofItemsAt: positions, afterCurrent: afterCurrent)
            case .range(let at, let range):
                let items = q.items()
                guard items.indices.contains(at) else { break }
                var item = items[at]
                item.range = range
                q.replaceItem(at: at, with: item)
            }
        }
    }

    /// On the daemon's queue: tells the connections that `changed` changed, and, when the player
    /// is among them, notes the play state they were told of (``toldState``). Every change the
    /// daemon posts goes through here.
    private func announce(_ changed: Set<MPDSubsystem>) {
        if changed.contains(.player) { toldState.withLock { $0 = player.playbackState } }
        hub.post(changed)
    }

    /// On the daemon's queue: one of the player's events (tests hand one in through
    /// ``handlePlayerEventForTesting(_:)``).
    private func playerEvent(_ e: QueuePlayerEvent) {
        switch e {
        case .stateChanged(let state):
            persist()
            // Announced only when it is the state now (a stale event is followed by the event or
            // the command of the change after it) and not yet told (a command's change was
            // announced with its answer).
            if state == player.playbackState, toldState.withLock({ $0 }) != state { announce([.player]) }
            // A song's decoder and buffers freed (stop, pause, the end): their heap goes back.
            trimmer.request()
        case .seeked, .finished, .outputLost, .outputReturned, .outputRemoved:
            persist()
            announce([.player])
        case .currentItemChanged(let index, let item):
            if let started = songStarted() { announce(started) }
            // A stream's own tags, read as it opened, are the song's from now on (as MPD's).
            if let index, let item, item.isRemote, let metadata = player.queue.streamMetadata(ofItemAt: index) {
                announce(machine.withLock { $0.streamTagsRead(position: index, location: item.path, tags: Self.tags(metadata)) })
            }
            persist()
            updateTitle()
            trimmer.request()
            // Another song while stopped (the queue edited) is not a player change for MPD.
            if player.playbackState != .stopped { announce([.player]) }
        case .itemPlayedToEnd(let index, _):
            let single = machine.withLock { $0.single != .off && !$0.isRepeat }
            if let outcome = machine.withLock({ $0.playedToEnd(position: index) }) {
                apply(outcome.actions)
                announce(outcome.changed)
            }
            if single { player.stop() }
        // Set by someone else (MPRIS): the MPD view follows; its own commands change nothing here.
        case .volumeChanged(let v):
            changedByPlayer(machine.withLock { $0.playerVolumeChanged(Int((v * 100).rounded())) })
        case .repeatModeChanged(let mode):
            changedByPlayer(machine.withLock { m in
                switch mode {
                case .none: m.playerRepeatChanged(repeat: false, single: nil)
                case .one: m.playerRepeatChanged(repeat: true, single: true)
                case .all: m.playerRepeatChanged(repeat: true, single: false)
                }
            })
        case .shuffleModeChanged(let mode):
            changedByPlayer(machine.withLock { $0.playerRandomChanged(mode != .off) })
        case .itemFailed(_, let item, let error):
            machine.withLock { $0.failed("Failed to play \(item.path): \(error)") }
            announce([.player])
        default:
            break
        }
    }

    private func changedByPlayer(_ changed: Set<MPDSubsystem>) {
        guard !changed.isEmpty else { return }
        persist()
        announce(changed)
    }

    /// `readcomments URI`: the file's comments as it stores them (``FileComments``), one
    /// `key: value` line each — as MPD, only keys of letters, `_` and `-` and values without
    /// control characters. A song of the database, or a local file for a client on the Unix
    /// socket; a stream has none here.
    private func readComments(_ uri: String, client: MPDClientContext) throws(MPDAck) -> MPDOutcome {
        var out = MPDOutcome(client: client)
        let song: MPDSong
        do { song = try resolve(uri, client: client, command: "readcomments") } catch {
            // MPD: a URI that names no file is no song here.
            throw error.code == .noExist ? MPDAck(.noExist, "No such song", command: "readcomments") : error
        }
        guard !song.location.contains("://") else { return out }
        let comments: [(key: String, value: String)]
        do { comments = try FileComments.read(path: song.location) } catch {
            throw MPDAck(.noExist, "Failed to load file", command: "readcomments")
        }
        for (key, value) in comments {
            guard let first = key.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
                  key.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0 == "_" || $0 == "-") }),
                  !value.unicodeScalars.contains(where: { $0.value < 0x20 }) else { continue }
            out.response += "\(key): \(value)\n"
        }
        return out
    }

    /// The song a URI of `add` names. Local files (an absolute path or `file://`) only for a
    /// client on the Unix socket (MPD's rule); http(s) for everyone; a relative URI from the
    /// music folders.
    func resolve(_ uri: String, client: MPDClientContext, command: String) throws(MPDAck) -> MPDSong {
        let lower = uri.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            return MPDSong(uri: uri, location: uri)
        }
        var path: String?
        if lower.hasPrefix("file://") {
            path = URL(string: uri)?.path
        } else if uri.hasPrefix("/") {
            path = uri
        }
        if let path {
            guard client.isLocal else { throw MPDAck(.permission, "Access denied", command: command) }
            // As MPD: a path that cannot be reached is a system error; a folder (outside the
            // music folder) is no song.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw MPDAck(.system, "Failed to access \(path): No such file or directory", command: command)
            }
            guard !isDirectory.boolValue else { throw MPDAck(.noExist, "No such song", command: command) }
            return Self.probe(path: path, uri: uri)
        }
        guard !uri.isEmpty, !uri.split(separator: "/").contains("..") else {
            throw MPDAck(.noExist, "No such directory", command: command)
        }
        // A song of the database (the music folders, each after the first under its name).
        if let path = database?.localPath(forURI: uri) { return Self.probe(path: path, uri: uri) }
        for dir in musicDirectories {
            let p = (dir as NSString).appendingPathComponent(uri)
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), !isDir.boolValue {
                return Self.probe(path: p, uri: uri)
            }
        }
        throw MPDAck(.noExist, "No such directory", command: command)
    }

    /// The MPD tags of `m`, in the order they are printed.
    static func tags(_ m: AudioMetadata) -> [(MPDTag, String)] {
        var tags: [(MPDTag, String)] = []
        func add(_ t: MPDTag, _ v: String?) { if let v, !v.isEmpty { tags.append((t, v)) } }
        add(.artist, m.artist)
        add(.album, m.album)
        add(.albumArtist, m.albumArtist)
        add(.title, m.title)
        add(.track, m.trackNumber.map(String.init))
        add(.genre, m.genre)
        add(.date, m.date)
        add(.composer, m.composer)
        add(.disc, m.discNumber.map(String.init))
        return tags
    }

    /// The song's tags, duration and format from its headers (a file that cannot be read is
    /// added without them; playing it then fails as with MPD).
    static func probe(path: String, uri: String) -> MPDSong {
        guard let p = try? MediaProbe(path: path) else { return MPDSong(uri: uri, location: path) }
        let tags = Self.tags(p.metadata)
        let f = p.fileFormat
        let format = MPDAudioFormat(sampleRate: f.sampleRate, format: f.bitsPerSample.map(String.init) ?? "f", channels: f.channelCount)
        var st = stat()
        let modified = stat(path, &st) == 0 ? Int64(st.st_mtim.tv_sec) : nil
        return MPDSong(uri: uri, location: path, tags: tags, duration: p.duration, format: format, lastModified: modified)
    }
}

/// One `malloc_trim(0)` a short while after a burst of requests: glibc keeps the heap a large
/// operation freed (10,000 songs added, a 3 MB `playlistinfo` answer) in its arenas — about
/// 30 MB of the daemon's private memory with a 10,000-song queue — until asked to give it back.
/// A request while one is pending joins it (a ``Coalescer`` with a delay); nothing is scheduled
/// while nothing is requested.
final class MemoryTrimmer: Sendable {
    /// Answers from this size on (bytes) ask for a trim.
    static let largeAnswer = 64 * 1024
    /// The trims: pending, counted, observed.
    let runs: Coalescer

    init(delay: Double = 2) { runs = Coalescer(label: "tonearm.daemon.trim", delay: delay) }

    /// Asks for a trim; from any thread.
    func request() { runs.request { Self.mallocTrim() } }

    /// At most `count` glibc malloc arenas for the process (`mallopt(M_ARENA_MAX, count)`). By
    /// default glibc gives threads that allocate at once arenas of their own, up to eight per core,
    /// and each keeps what was freed in it apart from the others (`malloc_trim` gives back only
    /// whole free pages of each): the daemon's threads (event loops, the command queue, the
    /// player, the library's readers, libdispatch's workers) spread its heap over many partly
    /// used arenas. Call before the threads start (`tonearm daemon`'s first step); without glibc
    /// nothing is done. Returns whether glibc took it.
    @discardableResult
    static func limitArenas(to count: Int32) -> Bool {
        guard let symbol = dlsym(nil, "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        return mallopt(-8, count) == 1  // M_ARENA_MAX
    }

    /// glibc's `malloc_trim(0)` (not in Swift's Glibc module: found with `dlsym`; absent, as
    /// with another C library, nothing is done).
    static func mallocTrim() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        let trim = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        _ = trim(0)
    }
}
