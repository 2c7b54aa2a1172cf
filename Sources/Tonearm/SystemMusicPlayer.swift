// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
@_exported import TonearmMPDClient

/// The system's music player (the counterpart of `MPMusicPlayerController.systemMusicPlayer`):
/// the queue of `tonearm daemon`, which plays on after the program that drives it has ended,
/// carried out over the daemon's MPD socket with ``MusicPlayer``'s names — `setQueue(with:)`,
/// `play()`, `pause()`, `stop()`, skipping, `currentPlaybackTime`, `repeatMode`,
/// `shuffleMode`, `volume` — and its change sequences, fed by MPD's `idle`.
///
/// Get it from ``MusicPlayer/system``, which starts the daemon when none runs (or
/// ``connect(to:password:)`` for another address, which starts nothing).
///
/// Threading and order: every member may be called from any thread. The commands (`play()`,
/// setting `volume`…) return at once, as ``MusicPlayer``'s do; they are sent in the order they
/// were made on one connection by a task of the player's own. The properties read what the
/// daemon last said: they change when its `idle` reports the change (a second connection, read
/// on the client's queue), so right after `play()` ``playbackState`` may still be the old one —
/// `await synchronize()` waits until every command made so far is carried out and the state
/// read again, and throws the first error the daemon answered since the last call. The change
/// sequences deliver on a task of the player's own, in the order the daemon reported the changes.
///
/// Not carried: ``MusicPlayer``'s audible fast scan (`beginSeekingForward()`…) — MPD has no such
/// command — and the queue's equaliser and effects, which belong to the daemon.
public final class SystemMusicPlayer: Sendable {
    /// What the daemon last said.
    public struct Snapshot: Sendable, Hashable {
        public var status: MPDStatus
        public var current: MPDSong?
    }

    /// One change the daemon reported, with the state after it.
    public enum Event: Sendable, Hashable {
        /// MPD's subsystems that changed (`player`, `playlist`, `mixer`, `options`…).
        case changed([String], Snapshot)
        /// A command sent by this player failed.
        case failed(MPDClientError)
    }

    public let address: MPDAddress
    private let commands: MPDClient
    private let watcher: MPDClient
    private let snapshot: Mutex<Snapshot>
    private let broadcaster = EventBroadcaster<Event>()
    /// The commands waiting to be sent, in order.
    private let pending: AsyncStream<Command>.Continuation
    /// A command to send: nil when it was carried out, else the error.
    private typealias Command = @Sendable () async -> MPDClientError?
    private let firstError = ErrorBox()

    /// The first error of a command since the last ``synchronize()``.
    private final class ErrorBox: Sendable {
        let value = Mutex<MPDClientError?>(nil)
    }
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let connected = Atomic<Bool>(true)

    /// False once the connection to the daemon broke (the daemon ended): the sequences have
    /// finished and commands fail; connect again.
    public var isConnected: Bool { connected.load(ordering: .relaxed) }

    private init(address: MPDAddress, commands: MPDClient, watcher: MPDClient, snapshot: Snapshot) {
        self.address = address
        self.commands = commands
        self.watcher = watcher
        self.snapshot = Mutex(snapshot)
        let (stream, continuation) = AsyncStream<Command>.makeStream()
        pending = continuation
        let firstError = self.firstError, broadcaster = self.broadcaster
        let sender = Task {
            for await command in stream {
                if let error = await command() {
                    firstError.value.withLock { if $0 == nil { $0 = error } }
                    broadcaster.yield(.failed(error))
                }
            }
        }
        let listener = Task { [weak self, watcher] in
            while !Task.isCancelled {
                let changed: [String]
                let next: Snapshot
                do {
                    changed = try await watcher.idle()
                    guard !changed.isEmpty else { continue }
                    next = try await Self.read(watcher)
                } catch {
                    self?.connected.store(false, ordering: .relaxed)
                    broadcaster.finish()
                    return
                }
                guard let self else { return }
                self.snapshot.withLock { $0 = next }
                broadcaster.yield(.changed(changed, next))
            }
        }
        tasks.withLock { $0 = [sender, listener] }
    }

    deinit {
        pending.finish()
        for t in tasks.withLock({ $0 }) { t.cancel() }
        commands.close()
        watcher.close()
        broadcaster.finish()
    }

    /// Connects to the daemon at `address` (two connections: commands, and `idle`).
    /// - Throws: ``MPDClientError/noServer(_:reason:)`` when no daemon answers there.
    public static func connect(to address: MPDAddress = .daemonSocket, password: String? = nil) async throws(MPDClientError) -> SystemMusicPlayer {
        let commands = try await MPDClient.connect(to: address, password: password)
        let watcher = try await MPDClient.connect(to: address, password: password)
        let snapshot = try await read(watcher)
        return SystemMusicPlayer(address: address, commands: commands, watcher: watcher, snapshot: snapshot)
    }

    private static func read(_ client: MPDClient) async throws(MPDClientError) -> Snapshot {
        let replies = try await client.sendList([("status", []), ("currentsong", [])])
        return Snapshot(status: MPDStatus(replies[0]), current: MPDSong.list(replies[1]).first)
    }

    /// Sends `command` after every command made before it.
    private func enqueue(_ command: String, _ arguments: String...) {
        let client = commands
        send { try await client.send(command, arguments: arguments) }
    }

    /// Queues `body` after every command made before it.
    private func send(_ body: @escaping @Sendable () async throws -> Void) {
        let address = self.address
        pending.yield {
            do {
                try await body()
                return nil
            } catch let error as MPDClientError {
                return error
            } catch {
                return .protocolError(address, "\(error)")
            }
        }
    }

    /// Waits until every command made so far was carried out, and reads the daemon's state.
    /// - Throws: the first error a command met since the last call.
    public func synchronize() async throws(MPDClientError) {
        let client = commands
        let done: Result<Snapshot, MPDClientError> = await withCheckedContinuation { continuation in
            pending.yield {
                do {
                    continuation.resume(returning: .success(try await Self.read(client)))
                } catch let error as MPDClientError {
                    continuation.resume(returning: .failure(error))
                } catch {
                    continuation.resume(returning: .failure(.protocolError(client.address, "\(error)")))
                }
                return nil
            }
        }
        if case .success(let now) = done { snapshot.withLock { $0 = now } }
        let error = firstError.value.withLock { e in defer { e = nil }; return e }
        if let error { throw error }
        _ = try done.get()
    }

    // MARK: The queue

    /// Replaces the daemon's queue with `items` (playback stops; the first becomes current).
    /// Files go by their absolute paths, which the daemon takes from its Unix socket only.
    public func setQueue(with items: [QueueItem]) { setQueue(withPaths: items.map(\.path)) }

    /// Replaces the daemon's queue with the files (absolute paths), URLs or library URIs.
    public func setQueue(withPaths paths: [String]) {
        let client = commands
        send {
            _ = try await client.sendList([("stop", []), ("clear", [])] + paths.map { ("add", [$0]) })
        }
    }

    /// Adds `paths` after the queue's last item.
    public func append(paths: [String]) {
        let client = commands
        send {
            _ = try await client.sendList(paths.map { ("add", [$0]) })
        }
    }

    // MARK: Playback

    public func play() { enqueue("play") }
    public func pause() { enqueue("pause", "1") }
    public func stop() { enqueue("stop") }
    /// Next item in play order.
    public func skipToNextItem() { enqueue("next") }
    /// The previous item (the daemon restarts the item when more than 3 s in).
    public func skipToPreviousItem() { enqueue("previous") }
    public func skipToBeginning() { enqueue("seekcur", "0") }

    // MARK: State (as the daemon last said)

    /// The daemon's state as last heard.
    public var currentSnapshot: Snapshot { snapshot.withLock { $0 } }

    public var playbackState: PlaybackState {
        switch currentSnapshot.status.state {
        case .play: return .playing
        case .pause: return .paused
        case .stop: return .stopped
        }
    }

    /// The current item (its path, or the URI the daemon gave it; its queue id as persistentID).
    public var nowPlayingItem: QueueItem? { currentSnapshot.current.map(Self.item) }
    public var indexOfNowPlayingItem: Int? { currentSnapshot.status.song }

    /// Seconds into the current item when last heard; setting it seeks.
    public var currentPlaybackTime: Double {
        get { currentSnapshot.status.elapsed ?? 0 }
        set { enqueue("seekcur", String(format: "%.3f", max(0, newValue))) }
    }

    /// `repeat` and `single` of the daemon: one = repeat + single.
    public var repeatMode: RepeatMode {
        get {
            let s = currentSnapshot.status
            return !s.repeatMode ? .none : (s.single == "1" ? .one : .all)
        }
        set {
            let client = commands
            send {
                _ = try await client.sendList([("repeat", [newValue == .none ? "0" : "1"]), ("single", [newValue == .one ? "1" : "0"])])
            }
        }
    }

    /// `random` of the daemon (albums shuffle as songs do there).
    public var shuffleMode: ShuffleMode {
        get { currentSnapshot.status.random ? .songs : .off }
        set { enqueue("random", newValue == .off ? "0" : "1") }
    }

    /// 0–1 (the daemon's 0–100); 1 when it has no mixer.
    public var volume: Float {
        get { currentSnapshot.status.volume.map { Float($0) / 100 } ?? 1 }
        set { enqueue("setvol", String(Int((min(max(newValue, 0), 1) * 100).rounded()))) }
    }

    // MARK: Sequences

    /// Every change the daemon reports (and every failed command), from now on.
    public var events: AsyncStream<Event> { broadcaster.stream(bufferingNewest: nil) }

    /// Playback state changes.
    public var playbackStateChanges: AsyncStream<PlaybackState> {
        derived { old, new in
            Self.state(old.status.state) == Self.state(new.status.state) ? nil : Self.state(new.status.state)
        }
    }

    /// Now-playing item changes (nil when the queue ended or was cleared).
    public var nowPlayingItemChanges: AsyncStream<QueueItem?> {
        derived { old, new in
            old.current?.id == new.current?.id && old.current?.file == new.current?.file ? nil : .some(new.current.map(Self.item))
        }
    }

    /// Volume changes.
    public var volumeChanges: AsyncStream<Float> {
        derived { old, new in
            old.status.volume == new.status.volume ? nil : new.status.volume.map { Float($0) / 100 } ?? 1
        }
    }

    /// A sequence of what `pick` takes from each change (from the snapshot before it).
    private func derived<T: Sendable>(_ pick: @escaping @Sendable (Snapshot, Snapshot) -> T?) -> AsyncStream<T> {
        let source = events
        let start = currentSnapshot
        return AsyncStream { c in
            let t = Task {
                var last = start
                for await e in source {
                    guard case .changed(_, let now) = e else { continue }
                    if let v = pick(last, now) { c.yield(v) }
                    last = now
                }
                c.finish()
            }
            c.onTermination = { _ in t.cancel() }
        }
    }

    private static func state(_ s: MPDStatus.State) -> PlaybackState {
        switch s {
        case .play: return .playing
        case .pause: return .paused
        case .stop: return .stopped
        }
    }

    private static func item(_ song: MPDSong) -> QueueItem {
        QueueItem(pathOrURL: song.file, persistentID: song.id.map { UInt64($0) })
    }
}

extension MusicPlayer {
    private static let systemPlayer = Mutex<SystemMusicPlayer?>(nil)

    /// The system's music player: the queue of `tonearm daemon` on its Unix socket
    /// (`$XDG_RUNTIME_DIR/tonearm/mpd.sock`), as ``SystemMusicPlayer`` — one per process,
    /// connected on first use, and again after the daemon went away (a restart).
    ///
    /// Like iOS's system player it is there when asked for: when no daemon answers at the socket,
    /// one is started — `tonearm daemon --detach`, with this process's environment (so it reads
    /// the user's config file and listens at this socket), from `$TONEARM_EXECUTABLE` or else
    /// the `tonearm` on `PATH` — and it plays on after this process ends.
    /// - Throws: ``MPDClientError/noServer(_:reason:)`` when no daemon runs and none could be
    ///   started: the reason says why (no `tonearm` on `PATH`, `TONEARM_EXECUTABLE` empty, or the
    ///   daemon's own error).
    public static var system: SystemMusicPlayer {
        get async throws(MPDClientError) {
            if let p = systemPlayer.withLock({ $0 }), p.isConnected, p.address == .daemonSocket { return p }
            let p: SystemMusicPlayer
            do {
                p = try await SystemMusicPlayer.connect()
            } catch .noServer(let address, let reason) {
                var failure: String?
                do { try await SystemDaemonStart.start() } catch { failure = error.reason }
                do {
                    p = try await SystemMusicPlayer.connect()
                } catch .noServer {
                    throw .noServer(address, reason: reason + "; " + (failure ?? "a daemon was started but does not answer there"))
                }
            }
            return systemPlayer.withLock { current in
                if let current, current.isConnected, current.address == p.address { return current }
                current = p
                return p
            }
        }
    }
}
