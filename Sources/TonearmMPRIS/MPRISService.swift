// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Dispatch
import Foundation
import Synchronization
import TonearmCore
import TonearmNowPlaying

/// Why ``MPRISService/start()`` failed.
public enum MPRISError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no session bus to connect to (none running, none in `DBUS_SESSION_BUS_ADDRESS`,
    /// or the given address does not answer). The player works on without MPRIS.
    case noSessionBus(String)
    /// Neither `org.mpris.MediaPlayer2.<suffix>` nor its `.instance<pid>` form could be owned.
    case nameUnavailable(String)
    /// The object could not be exported, or the service's thread could not be set up.
    case setupFailed(String)
    /// ``MPRISService/start()`` was called on a running service.
    case alreadyRunning

    public var description: String {
        switch self {
        case .noSessionBus(let m): "no D-Bus session bus: \(m)"
        case .nameUnavailable(let m): "cannot own the MPRIS bus name: \(m)"
        case .setupFailed(let m): "cannot set up the MPRIS service: \(m)"
        case .alreadyRunning: "the MPRIS service is already running"
        }
    }
}

/// Publishes a ``NowPlayingInfoCenter`` and a ``RemoteCommandCenter`` on the D-Bus session bus
/// as an MPRIS2 media player, so that desktop media widgets, media keys and `playerctl` see
/// and control the player.
///
/// It owns `org.mpris.MediaPlayer2.<suffix>` (or `org.mpris.MediaPlayer2.<suffix>.instance<pid>`
/// when another process owns that name) and exports `/org/mpris/MediaPlayer2` with the
/// `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player` interfaces, plus
/// `org.freedesktop.DBus.Properties` and `org.freedesktop.DBus.Introspectable`.
///
/// The name is a stack across processes, kept by the bus's own name queue: a service asks for
/// `org.mpris.MediaPlayer2.<suffix>` allowing replacement and waits in the bus's queue for it
/// (under its instance name meanwhile). A service made with `takesOverName` — a video player —
/// replaces the owner, which goes to the head of the queue under its instance name; when the
/// video's service stops or its process ends, the bus gives the name back to it. Clients that
/// pick a player by name (`playerctl -p <suffix>`, media keys) thus reach the video while it
/// runs and the music player after. ``busName`` follows.
///
/// Threads: ``start()`` starts one thread of its own, the D-Bus thread, which alone uses the
/// connection: it polls the connection's socket and an eventfd, answers calls, and sends
/// signals. Commands from clients (Play, Next, `Set Volume`, …) are dispatched on that thread
/// to the command center's targets, which should return quickly. Changes of the info center
/// and the command center are followed by two tasks that wake the D-Bus thread, which then
/// sends `PropertiesChanged` for the properties whose value changed (and `Seeked` for each
/// ``NowPlayingInfoCenter/didSeek(to:)``). Bad calls get D-Bus error replies.
///
/// Thread-safety: ``start()`` and ``stop()`` may be called from any thread, except that
/// ``stop()`` called from a command target (on the D-Bus thread) does not wait for the thread
/// to end. The core player never needs this module: with no bus, ``start()`` throws and
/// nothing else changes.
public final class MPRISService: Sendable {
    /// The configuration, fixed at init.
    struct Configuration: Sendable {
        let suffix: String
        let identity: String
        let desktopEntry: String
        let uriSchemes: [String]
        let mimeTypes: [String]
        let busAddress: String?
        let artworkDirectory: String?
        var takesOverName = false
    }

    private let core: ServiceCore

    /// A service for `infoCenter` and `commandCenter`, not yet started.
    ///
    /// - Parameters:
    ///   - suffix: the bus name is `org.mpris.MediaPlayer2.<suffix>`; it must be a valid bus
    ///     name element (letters, digits, `_`, not starting with a digit).
    ///   - identity: the player's name as clients show it.
    ///   - desktopEntry: the basename of the player's `.desktop` file.
    ///   - busAddress: a D-Bus address to connect to instead of the session bus named by
    ///     `DBUS_SESSION_BUS_ADDRESS` (for tests and sandboxes).
    ///   - artworkCacheDirectory: where embedded artwork is written for `mpris:artUrl`
    ///     (default `$XDG_CACHE_HOME/tonearm/art`).
    ///   - takesOverName: take `org.mpris.MediaPlayer2.<suffix>` from the player that owns it
    ///     (a video player over a music player, see ``MPRISService``) instead of taking the
    ///     `.instance<pid>` name.
    public init(busName suffix: String = "tonearm", identity: String = "Tonearm", desktopEntry: String = "tonearm",
                supportedUriSchemes: [String] = ["file"],
                supportedMimeTypes: [String] = ["audio/mpeg", "audio/flac", "audio/x-flac", "audio/ogg", "audio/opus",
                                                "audio/x-vorbis+ogg", "audio/mp4", "audio/aac", "audio/x-wav", "audio/wav"],
                infoCenter: NowPlayingInfoCenter = .default, commandCenter: RemoteCommandCenter = .shared,
                busAddress: String? = nil, artworkCacheDirectory: String? = nil, takesOverName: Bool = false) {
        core = ServiceCore(
            configuration: Configuration(suffix: suffix, identity: identity, desktopEntry: desktopEntry,
                                         uriSchemes: supportedUriSchemes, mimeTypes: supportedMimeTypes,
                                         busAddress: busAddress, artworkDirectory: artworkCacheDirectory,
                                         takesOverName: takesOverName),
            infoCenter: infoCenter, commandCenter: commandCenter)
    }

    deinit { core.stop() }

    /// Connects to the bus, exports the object, owns the name and starts the D-Bus thread.
    /// Returns once the service answers calls (blocks the caller for the connection's set-up).
    ///
    /// - Throws: ``MPRISError/noSessionBus(_:)`` when there is no bus,
    ///   ``MPRISError/nameUnavailable(_:)``, ``MPRISError/setupFailed(_:)``, or
    ///   ``MPRISError/alreadyRunning``. After an error the service is stopped and may be started again.
    public func start() throws(MPRISError) { try core.start() }

    /// Releases the name, closes the connection and ends the D-Bus thread (waiting for it, unless
    /// called on it). Idempotent.
    public func stop() { core.stop() }

    /// The bus name owned while running, nil otherwise.
    public var busName: String? { core.busName }

    /// Whether the service runs (false after the bus went away).
    public var isRunning: Bool { core.isRunning }
}

/// The state shared between the callers of start/stop, the change-following tasks, and the
/// D-Bus thread.
final class ServiceCore: Sendable {
    let configuration: MPRISService.Configuration
    let infoCenter: NowPlayingInfoCenter
    let commandCenter: RemoteCommandCenter

    struct Pending {
        var propertiesDirty = false
        var seeks: [Double] = []
        var stop = false
    }

    private struct Shared {
        var running = false
        var wakeFD: Int32 = -1
        var pending = Pending()
        var busName: String?
        var tasks: [Task<Void, Never>] = []
        var thread: pthread_t?
        var finished: DispatchSemaphore?
    }

    private let shared = Mutex(Shared())

    init(configuration: MPRISService.Configuration, infoCenter: NowPlayingInfoCenter, commandCenter: RemoteCommandCenter) {
        self.configuration = configuration
        self.infoCenter = infoCenter
        self.commandCenter = commandCenter
    }

    var busName: String? { shared.withLock { $0.busName } }

    /// The D-Bus thread's name changed (taken over, or given back by the bus's queue).
    func setBusName(_ name: String) { shared.withLock { if $0.running { $0.busName = name } } }

    var isRunning: Bool { shared.withLock { $0.running } }

    func start() throws(MPRISError) {
        let fd = cdbus_eventfd()
        guard fd >= 0 else { throw .setupFailed("eventfd: \(String(cString: strerror(errno)))") }
        let alreadyRunning = shared.withLock { s -> Bool in
            if s.running { return true }
            s.running = true
            s.wakeFD = fd
            s.pending = Pending()
            s.busName = nil
            return false
        }
        if alreadyRunning {
            close(fd)
            throw .alreadyRunning
        }
        // Follow the changes from before the thread starts, so that none is missed.
        let infoChanges = infoCenter.changes, commandChanges = commandCenter.changes
        let t1 = Task.detached { [weak self] in
            for await change in infoChanges {
                guard let self else { return }
                self.note(change)
            }
        }
        let t2 = Task.detached { [weak self] in
            for await _ in commandChanges {
                guard let self else { return }
                self.markDirty()
            }
        }
        let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
        let outcome = StartOutcome()
        shared.withLock {
            $0.tasks = [t1, t2]
            $0.finished = finished
        }
        let thread = Thread { [self] in
            shared.withLock { $0.thread = pthread_self() }
            let loop = BusLoop(core: self)
            let result = loop.connect()
            outcome.result.withLock { $0 = result }
            if case .success(let name) = result { shared.withLock { $0.busName = name } }
            started.signal()
            if case .success = result { loop.run() }
            loop.disconnect()
            let tasks = shared.withLock { s -> [Task<Void, Never>] in
                if s.wakeFD >= 0 { close(s.wakeFD) }
                s.wakeFD = -1
                s.running = false
                s.busName = nil
                s.thread = nil
                defer { s.tasks = [] }
                return s.tasks
            }
            for t in tasks { t.cancel() }
            finished.signal()
        }
        thread.name = "tonearm-mpris"
        thread.start()
        started.wait()
        if case .failure(let error) = outcome.result.withLock({ $0 }) {
            finished.wait()
            finished.signal()
            throw error
        }
    }

    func stop() {
        let (finished, onLoopThread) = shared.withLock { s -> (DispatchSemaphore?, Bool) in
            guard s.running else { return (nil, false) }
            s.pending.stop = true
            Self.wake(s.wakeFD)
            let on = s.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return (s.finished, on)
        }
        guard let finished, !onLoopThread else { return }
        finished.wait()
        finished.signal() // for a concurrent stop() waiting on the same thread
    }

    /// Takes the work that other threads left for the D-Bus thread.
    func takePending() -> Pending {
        shared.withLock { s in
            defer { s.pending.propertiesDirty = false; s.pending.seeks = [] }
            return s.pending
        }
    }

    /// The eventfd the D-Bus thread polls.
    var wakeFD: Int32 { shared.withLock { $0.wakeFD } }

    private func note(_ change: NowPlayingInfoCenter.Change) {
        shared.withLock { s in
            guard s.running else { return }
            if case .seeked(let p) = change { s.pending.seeks.append(p) }
            s.pending.propertiesDirty = true
            Self.wake(s.wakeFD)
        }
    }

    private func markDirty() {
        shared.withLock { s in
            guard s.running else { return }
            s.pending.propertiesDirty = true
            Self.wake(s.wakeFD)
        }
    }

    /// Wakes the D-Bus thread (under the lock, so the descriptor cannot be closed meanwhile).
    private static func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}

/// What the D-Bus thread's set-up ended with, handed to ``ServiceCore/start()``.
private final class StartOutcome: Sendable {
    let result = Mutex<Result<String, MPRISError>?>(nil)
}

/// `error.localizedDescription` is the same text as ``description`` (ported iOS code reports
/// errors that way; see TonearmCore's LocalizedErrors.swift).
extension MPRISError: LocalizedError {
    public var errorDescription: String? { description }
}
