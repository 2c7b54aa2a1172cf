// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmDesktop

/// What iOS does for every app that plays: its Now Playing info and remote commands reach the
/// lock screen and Control Center with no code of the app's own. Here the desktop's
/// counterpart is MPRIS on the D-Bus session bus (desktop media widgets, media keys,
/// `playerctl`), and ported code never starts an ``MPRISService``: the first
/// `MPRemoteCommandCenter.shared()` or `MPNowPlayingInfoCenter.default()` publishes the process's
/// centers there, as `org.mpris.MediaPlayer2.<the program's name>`.
///
/// The bus is the one `DBUS_SESSION_BUS_ADDRESS` names when a center is asked for (or
/// `$XDG_RUNTIME_DIR/bus`; never X11's autolaunch of a new bus). With no bus
/// (a server, a container) the centers work as before, unseen, and the reason is logged once
/// (label `tonearm.compat`). It is tried again when the address changes (a session bus that came
/// later) and, when the bus went away, at most every ``retryInterval`` seconds.
/// `TONEARM_MPRIS=0` in the environment turns it off (a program that publishes its own
/// ``MPRISService``, or wants none).
///
/// Thread-safety: any thread. ``ensurePublished()`` is cheap once published (one lock, one
/// environment read); a start (connecting, owning the name) happens on the caller's thread once.
public final class DesktopPublishing: Sendable {
    /// The process's publication of ``NowPlayingInfoCenter/default`` and ``RemoteCommandCenter/shared``.
    public static let shared = DesktopPublishing()

    /// Seconds between tries while the bus that answered before has gone away.
    public static let retryInterval: Double = 5

    private struct State {
        var service: MPRISService?
        /// The address last tried (`.some(nil)`: the environment named none) and when.
        var triedAddress: String??
        var triedAt: Double = 0
        /// A publication on ``triedAddress`` ran: its bus is worth trying again when it is gone.
        var answered = false
        /// ``unpublish()`` was called: nothing is published until ``publish(onBus:)``.
        var withdrawn = false
        var warned = false
    }

    private let state = Mutex(State())

    /// The bus-name element: the program's name, made valid (`[A-Za-z0-9_]`, no leading digit).
    public let busNameSuffix: String
    /// The name the desktop shows: the program's name.
    public let identity: String

    init(programName: String = ProcessInfo.processInfo.processName) {
        identity = programName
        busNameSuffix = Self.busNameElement(programName)
    }

    /// `name` as a D-Bus name element: letters, digits and `_`, the rest as `_`, a `_` in front of
    /// a leading digit, `app` for an empty name.
    static func busNameElement(_ name: String) -> String {
        var element = String(name.unicodeScalars.map { s -> Character in
            s.isASCII && (CharacterSet.alphanumerics.contains(s) || s == "_") ? Character(s) : "_"
        })
        if element.isEmpty { element = "app" }
        if let first = element.unicodeScalars.first, CharacterSet.decimalDigits.contains(first) { element = "_" + element }
        return element
    }

    /// The bus name owned while published (`org.mpris.MediaPlayer2.<suffix>`, or its
    /// `.instance<pid>` form when another process has that name), nil otherwise.
    public var busName: String? { state.withLock { $0.service?.busName } }

    /// Publishes the centers on the environment's session bus unless they are published already,
    /// that bus was tried before (see ``DesktopPublishing``), or `TONEARM_MPRIS=0`. Called by
    /// `MPRemoteCommandCenter.shared()` and `MPNowPlayingInfoCenter.default()`; any thread.
    public func ensurePublished() {
        ensurePublished(environment: ProcessInfo.processInfo.environment)
    }

    /// ``ensurePublished()`` with `env` in place of the process's environment (for tests).
    func ensurePublished(environment env: [String: String]) {
        guard env["TONEARM_MPRIS"] != "0" else { return }
        let address = Self.sessionBusAddress(env)
        let now = Self.seconds()
        let retry = state.withLock { s -> Bool in
            if s.withdrawn { return false }
            if let service = s.service, service.isRunning { return false }
            if let tried = s.triedAddress, tried == address {
                guard s.answered, now - s.triedAt >= Self.retryInterval else { return false }
            } else {
                s.answered = false
            }
            s.triedAddress = .some(address)
            s.triedAt = now
            return true
        }
        guard retry else { return }
        do {
            guard let address else {
                throw MPRISError.noSessionBus("DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")
            }
            try start(onBus: address)
            state.withLock { $0.answered = true }
        } catch {
            let first = state.withLock { s -> Bool in
                defer { s.warned = true }
                return !s.warned
            }
            if first {
                compatLogger.warning("MPRIS: the desktop does not see this program's Now Playing and remote commands (\(error))")
            }
        }
    }

    /// Publishes the centers on the bus at `address` (nil: the session bus), in place of where
    /// they were published before. For a program that knows its bus (a sandbox, tests).
    ///
    /// - Throws: ``MPRISError`` when that bus cannot be reached or the name not owned; the centers
    ///   are then unpublished.
    public func publish(onBus address: String?) throws(MPRISError) {
        state.withLock { s in
            s.withdrawn = false
            s.triedAddress = .some(address)
            s.triedAt = Self.seconds()
            s.answered = false
        }
        try start(onBus: address)
        state.withLock { $0.answered = true }
    }

    private func start(onBus address: String?) throws(MPRISError) {
        let service = MPRISService(busName: busNameSuffix, identity: identity, desktopEntry: busNameSuffix,
                                   infoCenter: .default, commandCenter: .shared, busAddress: address)
        let old = state.withLock { s -> MPRISService? in
            defer { s.service = nil }
            return s.service
        }
        old?.stop()
        try service.start()
        let replaced = state.withLock { s -> MPRISService? in
            defer { s.service = service }
            return s.service
        }
        replaced?.stop()  // a publication that raced this one
    }

    /// Takes the centers off the bus until the next ``publish(onBus:)``.
    public func unpublish() {
        state.withLock { s -> MPRISService? in
            s.withdrawn = true
            defer { s.service = nil }
            return s.service
        }?.stop()
    }

    /// The session bus `env` names: `DBUS_SESSION_BUS_ADDRESS`, else the user's bus socket
    /// (`$XDG_RUNTIME_DIR/bus`, where systemd's user session puts it). Never X11 autolaunch:
    /// a player does not start a bus daemon behind the user's back.
    static func sessionBusAddress(_ env: [String: String]) -> String? {
        if let a = env["DBUS_SESSION_BUS_ADDRESS"], !a.isEmpty { return a }
        if let dir = env["XDG_RUNTIME_DIR"], !dir.isEmpty, FileManager.default.fileExists(atPath: dir + "/bus") {
            return "unix:path=" + dir + "/bus"
        }
        return nil
    }

    private static func seconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
}
