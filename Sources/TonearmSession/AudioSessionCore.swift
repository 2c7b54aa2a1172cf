// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import TonearmDBus
import Synchronization

/// The state of an ``AudioSession``, shared between its callers and its bus thread; decides
/// what the other sessions' signals mean for this one. Thread-safe (one lock; continuations are
/// yielded under it; subscribers are removed off the terminating thread, see `subscribe`).
final class SessionCore: Sendable {
    typealias Category = AudioSession.Category
    typealias Mode = AudioSession.Mode
    typealias Options = AudioSession.CategoryOptions

    struct Snapshot: Sendable {
        var category: Category = .soloAmbient
        var mode: Mode = .default
        var options: Options = []
        var active = false
    }

    /// What the bus thread sends.
    enum Announcement: Sendable, Equatable {
        /// `at`: when it was made, on the system-wide monotonic clock (ns).
        case activated(Category, Mode, Options, at: UInt64)
        case deactivated(notifyOthers: Bool)
    }

    /// What the bus thread received from another session.
    enum Received: Sendable, Equatable {
        case activated(id: String, sender: String, Category, Mode, Options, duckLevel: Float, at: UInt64)
        case deactivated(id: String, notifyOthers: Bool)
        /// A connection left the bus (its unique name).
        case vanished(sender: String)
    }

    enum Link {
        case idle
        case connecting(DispatchSemaphore)
        case connected
        case unavailable
    }

    private struct State {
        var session = Snapshot()
        /// When this session last announced itself (monotonic ns): only a later announcement
        /// interrupts it, so that one crossing its own on the bus does not.
        var activatedAt: UInt64 = 0
        /// The sessions whose interruption of this one is pending.
        var interruptedBy: Set<String> = []
        /// The sessions ducking this one, with their levels.
        var duckedBy: [String: Float] = [:]
        /// The unique bus name each other session sent from, to notice it leaving.
        var senders: [String: String] = [:]
        var interruptionSubscribers: [Int: AsyncStream<AudioSession.Interruption>.Continuation] = [:]
        var duckingSubscribers: [Int: AsyncStream<AudioSession.Ducking>.Continuation] = [:]
        var categorySubscribers: [Int: @Sendable (_ sessionEnded: Bool) -> Void] = [:]
        var nextSubscriber = 0
        var link = Link.idle
        var outgoing: [Announcement] = []
        /// Announcements queued for the bus thread since it started, and how many of them it has
        /// written to the bus (sent and flushed): a deactivation waits until its own is out.
        var queued: UInt64 = 0
        var delivered: UInt64 = 0
        var deliveryWaiters: [(upTo: UInt64, DispatchSemaphore)] = []
        /// The bus thread (it never waits for its own deliveries).
        var busThread: pthread_t?
        var stopRequested = false
        var wakeFD: Int32 = -1
        var finished: DispatchSemaphore?
        /// Whether the session meets the others of the process in the ``SessionHub`` (its bus
        /// is unavailable).
        var inHub = false
    }

    let identifier: String
    let bus: AudioSession.Bus
    private let state = Mutex(State())

    init(identifier: String, bus: AudioSession.Bus) {
        self.identifier = identifier
        self.bus = bus
    }

    var snapshot: Snapshot { state.withLock { $0.session } }

    /// The bus name element for an identifier: `s` and the identifier with every character
    /// outside `[A-Za-z0-9_]` replaced by `_`.
    static func nameElement(_ identifier: String) -> String {
        "s" + String(identifier.unicodeScalars.map { c -> Character in
            c.isASCII && (CharacterSet.alphanumerics.contains(c) || c == "_") ? Character(c) : "_"
        })
    }

    // MARK: Bus thread life

    /// Connects once (starting the bus thread) and tells whether the bus is reachable. Blocks
    /// while connecting; callers arriving meanwhile wait for the same attempt. A session whose
    /// bus is unavailable (and is not ``AudioSession/Bus/none``) joins the process's
    /// ``SessionHub`` instead.
    /// Whether the bus question is settled (connected, or known to be unavailable): an
    /// activation then never waits for a connection.
    var isBusSettled: Bool {
        state.withLock { s in
            switch s.link {
            case .connected, .unavailable: true
            case .idle, .connecting: false
            }
        }
    }

    func ensureBus() -> Bool {
        let connected = connectOnce()
        if !connected { joinHub() }
        return connected
    }

    private func joinHub() {
        guard bus != .none else { return }
        state.withLock { s in
            guard !s.stopRequested, !s.inHub, case .unavailable = s.link else { return }
            s.inHub = true
            SessionHub.shared.join(self, bus: bus)
        }
    }

    private func connectOnce() -> Bool {
        while true {
            enum Step { case done(Bool), wait(DispatchSemaphore), start(Int32, DispatchSemaphore) }
            let step = state.withLock { s -> Step in
                switch s.link {
                case .connected: return .done(true)
                case .unavailable: return .done(false)
                case .connecting(let sem): return .wait(sem)
                case .idle:
                    if s.stopRequested { s.link = .unavailable; return .done(false) }
                    if bus == .none || (bus == .session && !Self.sessionBusConfigured) {
                        s.link = .unavailable
                        return .done(false)
                    }
                    let fd = cdbus_eventfd()
                    guard fd >= 0 else { s.link = .unavailable; return .done(false) }
                    let sem = DispatchSemaphore(value: 0)
                    s.link = .connecting(sem)
                    s.wakeFD = fd
                    s.finished = DispatchSemaphore(value: 0)
                    return .start(fd, sem)
                }
            }
            switch step {
            case .done(let connected): return connected
            case .wait(let sem):
                sem.wait()
                sem.signal() // for the next waiter
            case .start(let fd, let sem):
                startThread(wakeFD: fd, connected: sem)
            }
        }
    }

    private func startThread(wakeFD: Int32, connected: DispatchSemaphore) {
        let address: String? = if case .address(let a) = bus { a } else { nil }
        let element = Self.nameElement(identifier)
        let thread = Thread { [self] in
            state.withLock { $0.busThread = pthread_self() }
            let loop = SessionBusLoop(core: self)
            let ok = loop.connect(address: address, nameElement: element)
            state.withLock { $0.link = ok ? .connected : .unavailable }
            connected.signal()
            if ok { loop.run(wakeFD: wakeFD) }
            loop.disconnect()
            let finished = state.withLock { s -> DispatchSemaphore? in
                if s.wakeFD >= 0 { close(s.wakeFD) }
                s.wakeFD = -1
                s.link = .unavailable
                s.outgoing = []
                s.busThread = nil
                s.delivered = s.queued
                Self.releaseDeliveryWaiters(&s)
                return s.finished
            }
            finished?.signal()
        }
        thread.name = "tonearm-session"
        thread.start()
    }

    /// Ends the bus thread (waiting for it) and the event streams, and leaves the hub.
    /// Idempotent.
    func stop() {
        defer {
            SessionHub.shared.leave(self)
            SessionHub.shared.drain()
        }
        let (finished, subscribers, categories) = state.withLock { s -> (DispatchSemaphore?, ([AsyncStream<AudioSession.Interruption>.Continuation], [AsyncStream<AudioSession.Ducking>.Continuation]), [@Sendable (Bool) -> Void]) in
            s.stopRequested = true
            Self.wake(s.wakeFD)
            defer { s.interruptionSubscribers = [:]; s.duckingSubscribers = [:]; s.categorySubscribers = [:] }
            return (s.finished, (Array(s.interruptionSubscribers.values), Array(s.duckingSubscribers.values)),
                    Array(s.categorySubscribers.values))
        }
        for c in subscribers.0 { c.finish() }
        for c in subscribers.1 { c.finish() }
        for c in categories { c(true) }
        if let finished {
            finished.wait()
            finished.signal()
        }
    }

    /// For the bus thread: `count` announcements taken from ``takeOutgoing()`` are on the bus
    /// (sent and flushed).
    func delivered(_ count: Int) {
        guard count > 0 else { return }
        state.withLock { s in
            s.delivered += UInt64(count)
            Self.releaseDeliveryWaiters(&s)
        }
    }

    private static func releaseDeliveryWaiters(_ s: inout State) {
        let delivered = s.delivered
        s.deliveryWaiters.removeAll { w in
            guard w.upTo <= delivered else { return false }
            w.1.signal()
            return true
        }
    }

    /// Waits (at most `timeout` seconds) until every announcement queued so far is on the bus,
    /// so that a process that ends right after a deactivation is heard by the others as having
    /// deactivated (with its `notifyOthers`) and not only as gone. Returns at once without a bus
    /// connection, and on the bus thread itself. Not with `state` held.
    func waitUntilDelivered(timeout: Double) {
        let waiter = state.withLock { s -> DispatchSemaphore? in
            guard case .connected = s.link, s.delivered < s.queued else { return nil }
            if let t = s.busThread, pthread_equal(t, pthread_self()) != 0 { return nil }
            let sem = DispatchSemaphore(value: 0)
            s.deliveryWaiters.append((s.queued, sem))
            return sem
        }
        guard let waiter else { return }
        if waiter.wait(timeout: .now() + timeout) == .timedOut {
            // Gone from the list, or the signal that came meanwhile is consumed with it.
            state.withLock { s in s.deliveryWaiters.removeAll { $0.1 === waiter } }
        }
    }

    /// Announcements queued for the bus and not yet on it.
    var undeliveredAnnouncements: UInt64 { state.withLock { $0.queued - $0.delivered } }

    /// For the bus thread: whether to stop, and the announcements to send.
    func takeOutgoing() -> (stop: Bool, announcements: [Announcement]) {
        state.withLock { s in
            defer { s.outgoing = [] }
            return (s.stopRequested, s.outgoing)
        }
    }

    /// Whether a session bus is configured (`DBusSupport.sessionBusAddress`); without one the
    /// session stays local instead of letting libdbus autolaunch a bus.
    static var sessionBusConfigured: Bool { DBusSupport.sessionBusAddress() != nil }

    /// The system-wide monotonic clock (`CLOCK_MONOTONIC`, the same in every process), in ns.
    static func now() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    private static func wake(_ fd: Int32) {
        guard fd >= 0 else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Queues an announcement for the bus thread, or for the hub's other members when the
    /// session is in the hub (dropped otherwise). Lock held; the caller drains the hub after
    /// releasing it.
    private func announce(_ a: Announcement, _ s: inout State) {
        if case .connected = s.link {
            s.outgoing.append(a)
            s.queued += 1
            Self.wake(s.wakeFD)
        } else if s.inHub {
            let message: Received = switch a {
            case .activated(let category, let mode, let options, let at):
                .activated(id: identifier, sender: "", category, mode, options, duckLevel: AudioSession.duckLevel, at: at)
            case .deactivated(let notify):
                .deactivated(id: identifier, notifyOthers: notify)
            }
            SessionHub.shared.post(message, from: self)
        }
    }

    // MARK: Subscribers

    func subscribe(interruptions c: AsyncStream<AudioSession.Interruption>.Continuation) {
        let id = state.withLock { s -> Int? in
            guard !s.stopRequested else { return nil }
            s.nextSubscriber += 1
            s.interruptionSubscribers[s.nextSubscriber] = c
            return s.nextSubscriber
        }
        guard let id else { c.finish(); return }
        // Removed from another thread, never inside onTermination itself: a cancelled task runs
        // onTermination while holding its status lock, and a yield made under `state` needs that
        // lock — taking `state` here would deadlock with it.
        c.onTermination = { [weak self] _ in
            guard let core = self else { return }
            DispatchQueue.global().async { core.state.withLock { _ = $0.interruptionSubscribers.removeValue(forKey: id) } }
        }
    }

    func subscribe(ducking c: AsyncStream<AudioSession.Ducking>.Continuation) {
        let id = state.withLock { s -> Int? in
            guard !s.stopRequested else { return nil }
            s.nextSubscriber += 1
            s.duckingSubscribers[s.nextSubscriber] = c
            return s.nextSubscriber
        }
        guard let id else { c.finish(); return }
        c.onTermination = { [weak self] _ in
            guard let core = self else { return }
            DispatchQueue.global().async { core.state.withLock { _ = $0.duckingSubscribers.removeValue(forKey: id) } }
        }
    }

    /// Calls `changed(false)` (under the lock: it must only hand the news on) whenever the
    /// category or mode changes, until `unsubscribe(category:)`, and `changed(true)` once when the
    /// session stops. Returns the subscription's id (nil once stopped).
    func subscribe(categoryChanges changed: @escaping @Sendable (_ sessionEnded: Bool) -> Void) -> Int? {
        state.withLock { s -> Int? in
            guard !s.stopRequested else { return nil }
            s.nextSubscriber += 1
            s.categorySubscribers[s.nextSubscriber] = changed
            return s.nextSubscriber
        }
    }

    func unsubscribe(category id: Int) {
        state.withLock { _ = $0.categorySubscribers.removeValue(forKey: id) }
    }

    private static func emit(_ e: AudioSession.Interruption, _ s: State) {
        for c in s.interruptionSubscribers.values { c.yield(e) }
    }

    private static func emit(_ e: AudioSession.Ducking, _ s: State) {
        for c in s.duckingSubscribers.values { c.yield(e) }
    }

    // MARK: This session

    func setCategory(_ category: Category, mode: Mode, options: Options) {
        defer { SessionHub.shared.drain() }
        state.withLock { s in
            let changed = s.session.category != category || s.session.mode != mode
            s.session.category = category
            s.session.mode = mode
            s.session.options = options
            if changed { for c in s.categorySubscribers.values { c(false) } }
            if s.session.active {
                s.activatedAt = Self.now()
                announce(.activated(category, mode, options, at: s.activatedAt), &s)
            }
        }
    }

    func setActive(_ active: Bool, notifyOthers: Bool) {
        defer { SessionHub.shared.drain() }
        state.withLock { s in
            guard s.session.active != active else { return }
            s.session.active = active
            if active {
                // Taking over ends this session's own pending interruption (silently: the caller knows).
                s.interruptedBy = []
                s.activatedAt = Self.now()
                announce(.activated(s.session.category, s.session.mode, s.session.options, at: s.activatedAt), &s)
            } else {
                announce(.deactivated(notifyOthers: notifyOthers), &s)
            }
        }
    }

    /// The key under which the sound server's interruption is kept among the sessions'.
    static let serverKey = "\u{0}server"

    /// The sound server asked a stream of this process to stop for another (`began`), or let it
    /// go on. Any thread.
    func serverInterruption(began: Bool) {
        defer { SessionHub.shared.drain() }
        state.withLock { s in
            if began {
                let first = s.interruptedBy.isEmpty
                s.interruptedBy.insert(Self.serverKey)
                guard first else { return }
                if s.session.active {
                    s.session.active = false
                    announce(.deactivated(notifyOthers: false), &s)
                }
                Self.emit(.began, s)
            } else {
                Self.end(Self.serverKey, shouldResume: true, &s)
            }
        }
    }

    // MARK: Other sessions

    /// Applies what another session announced (bus thread, or whoever drains the hub).
    func receive(_ r: Received) {
        defer { SessionHub.shared.drain() }
        state.withLock { s in
            switch r {
            case .activated(let id, let sender, let category, _, let options, let level, let at):
                guard id != identifier else { return }
                s.senders[id] = sender
                let me = s.session
                let spoken = options.contains(.interruptSpokenAudioAndMixWithOthers) && me.mode == .spokenAudio
                let interrupts = AudioSession.isExclusive(category, options) || spoken
                let exposed = me.category != .ambient && (!AudioSession.mixes(me.category, me.options) || spoken)
                let later = at > s.activatedAt || (at == s.activatedAt && id > identifier)
                if interrupts, exposed, later, me.active || !s.interruptedBy.isEmpty {
                    let first = s.interruptedBy.isEmpty
                    s.interruptedBy.insert(id)
                    if first {
                        s.session.active = false
                        announce(.deactivated(notifyOthers: false), &s)
                        Self.emit(.began, s)
                    }
                }
                if options.contains(.duckOthers) {
                    if s.duckedBy.isEmpty { Self.emit(.duckRequested(level: level), s) }
                    s.duckedBy[id] = level
                } else {
                    Self.endDuck(by: id, &s)
                }
            case .deactivated(let id, let notify):
                guard id != identifier else { return }
                Self.end(id, shouldResume: notify, &s)
            case .vanished(let sender):
                for (id, name) in s.senders where name == sender {
                    s.senders.removeValue(forKey: id)
                    Self.end(id, shouldResume: false, &s)
                }
            }
        }
    }

    private static func end(_ id: String, shouldResume: Bool, _ s: inout State) {
        if s.interruptedBy.remove(id) != nil, s.interruptedBy.isEmpty {
            emit(.ended(shouldResume: shouldResume), s)
        }
        endDuck(by: id, &s)
    }

    private static func endDuck(by id: String, _ s: inout State) {
        if s.duckedBy.removeValue(forKey: id) != nil, s.duckedBy.isEmpty { emit(.duckEnded, s) }
    }
}
