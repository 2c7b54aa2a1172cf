// SPDX-License-Identifier: GPL-3.0-or-later
import Synchronization

/// Where the sessions of one process meet when their bus cannot be reached: no session bus
/// configured (no `DBUS_SESSION_BUS_ADDRESS`, no `$XDG_RUNTIME_DIR/bus`) or its address does not
/// answer. A session whose bus turns out unavailable joins the hub under its ``AudioSession/Bus``
/// value; what it would have announced on the bus is delivered to the other members under the
/// same value, in the order announced, exactly as the bus thread delivers another process's
/// signals — so a video's session interrupts the music player's session of the same process and
/// lets it resume, bus or not. Sessions with ``AudioSession/Bus/none`` never join (they stay
/// alone, as documented); sessions that reached their bus meet there and not here.
///
/// Thread-safety: `post` may be called with a session's lock held (it only queues); `drain`
/// must be called without any lock held. Whoever drains delivers everything queued, including
/// what the deliveries queue in turn, one announcement at a time, outside the hub's lock; a
/// caller arriving while another drains leaves its announcement to that one.
final class SessionHub: Sendable {
    /// The process's hub.
    static let shared = SessionHub()

    private struct Member {
        weak var core: SessionCore?
        let bus: AudioSession.Bus
    }

    private struct Letter {
        let bus: AudioSession.Bus
        let from: ObjectIdentifier
        let message: SessionCore.Received
    }

    private struct State {
        var members: [ObjectIdentifier: Member] = [:]
        var queue: [Letter] = []
        var draining = false
    }

    private let state = Mutex(State())

    /// Makes `core` a member under `bus` (idempotent).
    func join(_ core: SessionCore, bus: AudioSession.Bus) {
        state.withLock { $0.members[ObjectIdentifier(core)] = Member(core: core, bus: bus) }
    }

    func isMember(_ core: SessionCore) -> Bool {
        state.withLock { $0.members[ObjectIdentifier(core)] != nil }
    }

    /// Removes `core`; the others hear it leave as a bus's sessions hear a connection vanish
    /// (a pending interruption by it ends without resuming). Call `drain()` after.
    func leave(_ core: SessionCore) {
        state.withLock { s in
            let key = ObjectIdentifier(core)
            guard let m = s.members.removeValue(forKey: key) else { return }
            s.queue.append(Letter(bus: m.bus, from: key,
                                  message: .deactivated(id: core.identifier, notifyOthers: false)))
        }
    }

    /// Queues `message` from member `core` for the other members on its bus (nothing when
    /// `core` is not a member). Never blocks on another session: safe under `core`'s lock.
    func post(_ message: SessionCore.Received, from core: SessionCore) {
        state.withLock { s in
            let key = ObjectIdentifier(core)
            guard let m = s.members[key] else { return }
            s.queue.append(Letter(bus: m.bus, from: key, message: message))
        }
    }

    /// Delivers what is queued (see the type's documentation). No lock may be held.
    func drain() {
        enum Step { case done, deliver(SessionCore.Received, [SessionCore]) }
        let begin = state.withLock { s -> Bool in
            guard !s.draining, !s.queue.isEmpty else { return false }
            s.draining = true
            return true
        }
        guard begin else { return }
        while true {
            let step = state.withLock { s -> Step in
                guard !s.queue.isEmpty else {
                    s.draining = false
                    return .done
                }
                let letter = s.queue.removeFirst()
                let to = s.members.compactMap { key, m -> SessionCore? in
                    key != letter.from && m.bus == letter.bus ? m.core : nil
                }
                return .deliver(letter.message, to)
            }
            guard case .deliver(let message, let cores) = step else { return }
            for core in cores { core.receive(message) }
        }
    }
}
