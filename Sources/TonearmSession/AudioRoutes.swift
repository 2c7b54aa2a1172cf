// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import Dispatch
import Glibc
import Synchronization
import TonearmCore

/// The outputs of the sound server — PulseAudio's sinks, network sinks included — the current
/// one, a way to choose one, and a stream of route changes: Tonearm's counterpart of
/// `AVAudioSession.currentRoute`, `AVRoutePickerView` and `routeChangeNotification`.
///
/// ```swift
/// let routes = AudioRoutes()
/// for output in try routes.outputs() { print(output.name, output.portType) }
/// try routes.setDefaultOutput(named: "bluez_sink.00_11_22_33_44_55.a2dp_sink")
/// try routes.moveStreams(to: "bluez_sink.00_11_22_33_44_55.a2dp_sink") // playing audio follows
/// for await change in try routes.changes where change.reason == .oldDeviceUnavailable { player.pause() }
/// ```
///
/// Threading: every method may be called from any thread (several at once); each blocks the
/// caller until the server has answered, at most `timeout` seconds per request. Do not call them
/// from a PulseAudio callback. Change events are delivered by an `AsyncStream`, produced on the
/// connection's own mainloop thread.
///
/// Errors: ``TonearmError/outputUnavailable(driver:reason:)`` when no server answers, the
/// connection is lost, the server refuses a request or does not answer in time (the reason says
/// which); ``TonearmError/invalidArgument(_:)`` for an output name the server does not know (the
/// message lists the known ones).
public final class AudioRoutes: Sendable {
    /// The server (`unix:/path`, `tcp:host`); nil for libpulse's default (`PULSE_SERVER`, then the
    /// user's socket). A server is never started.
    public let server: String?
    /// How long each request to the server may take, in seconds.
    public let timeout: Double
    private let control: SharedControl
    /// The change streams alive now, told about this object's own default-output changes.
    private let watchers = Mutex<[ObjectIdentifier: RouteWatcher]>([:])

    /// Creates the object; the connection is made on first use (and again after the server went
    /// away).
    public init(server: String? = nil, timeout: Double = 2) {
        self.server = server
        self.timeout = max(timeout, 0.05)
        control = SharedControl(server: server, clientName: "Tonearm routes", timeout: self.timeout)
    }

    /// Every output, in the server's order, the default one marked. Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` without a server.
    public func outputs() throws -> [AudioOutputRoute] {
        let c = try control.get()
        let defaultName = try c.defaultSinkName()
        return try c.sinks().map { AudioOutputRoute($0, defaultName: defaultName) }
    }

    /// The output in use: the server's default sink (nil when the server has no sink at all).
    public func currentOutput() throws -> AudioOutputRoute? {
        let c = try control.get()
        guard let name = try c.defaultSinkName(), let sink = try c.sink(named: name) else { return nil }
        return AudioOutputRoute(sink, defaultName: name)
    }

    /// Makes the output `name` the server's default: streams that were not sent to a particular
    /// output follow it (PulseAudio 15 and later, and PipeWire); use ``moveStreams(ofProcess:to:)``
    /// to move this process's streams in any case. Change streams of this object report it as
    /// ``AudioRouteChange/Reason/override``. Throws ``TonearmError/invalidArgument(_:)`` naming
    /// the known outputs when there is no output `name`.
    public func setDefaultOutput(named name: String) throws {
        let c = try control.get()
        let sinks = try c.sinks()
        guard sinks.contains(where: { $0.name == name }) else { throw Self.unknown(name, sinks) }
        let live = watchers.withLock { Array($0.values) }
        for w in live { w.expectOverride(to: name) }
        try c.setDefaultSink(name)
    }

    /// Every input — microphones, line ins, and the monitors of the outputs (what each plays) —
    /// in the server's order, the default one marked (`AVAudioSession.availableInputs`, which
    /// lists no monitors: filter on ``AudioInputRoute/monitorOf`` for the same list). Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` without a server.
    public func inputs() throws -> [AudioInputRoute] {
        let c = try control.get()
        let defaultName = try c.defaultSourceName()
        return try c.sources().map { AudioInputRoute($0, defaultName: defaultName) }
    }

    /// The input in use: the server's default source (nil when the server has none).
    public func currentInput() throws -> AudioInputRoute? {
        let c = try control.get()
        guard let name = try c.defaultSourceName() else { return nil }
        return try c.sources().first { $0.name == name }.map { AudioInputRoute($0, defaultName: name) }
    }

    /// Makes the input `name` the server's default: recordings that name no source read from it.
    /// Throws ``TonearmError/invalidArgument(_:)`` naming the known inputs when there is no input
    /// `name`.
    public func setDefaultInput(named name: String) throws {
        let c = try control.get()
        let sources = try c.sources()
        guard sources.contains(where: { $0.name == name }) else {
            let known = sources.map(\.name)
            throw TonearmError.invalidArgument("no input named '\(name)'; inputs: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
        }
        try c.setDefaultSource(name)
    }

    /// Moves the playback streams of process `pid` (this one by default) — those whose
    /// `application.process.id` is `pid` — to the output `name`, with
    /// `pa_context_move_sink_input_by_index`: they keep playing, without a restart. Returns how
    /// many streams were moved (0 when the process plays nothing). Throws
    /// ``TonearmError/invalidArgument(_:)`` for an unknown output.
    @discardableResult
    public func moveStreams(ofProcess pid: pid_t = getpid(), to name: String) throws -> Int {
        let c = try control.get()
        let sinks = try c.sinks()
        guard let target = sinks.first(where: { $0.name == name }) else { throw Self.unknown(name, sinks) }
        var moved = 0
        for input in try c.sinkInputs() where input.processID == pid {
            if input.sink != target.index { try c.moveSinkInput(input.index, toSink: target.index) }
            moved += 1
        }
        return moved
    }

    /// Route changes from now on, as the server announces them (`pa_context_subscribe` on sinks
    /// and the server; nothing polls): outputs appearing (``AudioRouteChange/Reason/newDeviceAvailable``)
    /// and going away (``AudioRouteChange/Reason/oldDeviceUnavailable``, with the route that is
    /// gone), headphones plugged into or out of a sink's port, the default output changing
    /// (``AudioRouteChange/Reason/defaultOutputChanged``, or ``AudioRouteChange/Reason/override``
    /// when this object changed it), and outputs changing their port or format
    /// (``AudioRouteChange/Reason/routeConfigurationChange``). Volume changes are not route
    /// changes (see ``SystemVolume``).
    ///
    /// Each access makes a new stream with a connection of its own, subscribed before the
    /// getter returns; the stream ends when the connection is lost, and the connection is closed
    /// when the stream is dropped or its iteration cancelled. Throws
    /// ``TonearmError/outputUnavailable(driver:reason:)`` without a server. Blocks the caller
    /// while it connects and reads the initial state (at most a few `timeout`s).
    public var changes: AsyncStream<AudioRouteChange> {
        get throws {
            let key = WatcherKey()
            return try PulseControl.changeStream(server: server, clientName: "Tonearm route events", timeout: timeout,
                                                 bufferingNewest: 256, start: { control, continuation in
                let watcher = RouteWatcher(control: control, continuation: continuation)
                try watcher.start()
                key.id.withLock { $0 = ObjectIdentifier(watcher) }
                watchers.withLock { $0[ObjectIdentifier(watcher)] = watcher }
            }, onEnd: { [weak self] in
                if let id = key.id.withLock({ $0 }) { _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
            })
        }
    }

    static func unknown(_ name: String, _ sinks: [SinkSnapshot]) -> TonearmError {
        let known = sinks.map(\.name)
        return .invalidArgument("no output named '\(name)'; outputs: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }
}

/// Which watcher a change stream has, for removing it when the stream ends.
private final class WatcherKey: Sendable {
    let id = Mutex<ObjectIdentifier?>(nil)
}

/// Keeps the state one change stream compares against: the sinks and the default sink's name as
/// last seen. Touched only with the mainloop lock held (on the mainloop thread, or by `start` and
/// `expectOverride` from the caller's thread with the lock taken).
final class RouteWatcher: @unchecked Sendable {
    let control: PulseControl
    private let continuation: AsyncStream<AudioRouteChange>.Continuation
    private var sinks: [UInt32: SinkSnapshot] = [:]
    private var defaultName: String?
    /// Default-output names this process asked for that have not been seen yet.
    private var expectedOverrides: [String] = []

    init(control: PulseControl, continuation: AsyncStream<AudioRouteChange>.Continuation) {
        self.control = control
        self.continuation = continuation
    }

    /// Subscribes, reads the initial state, then replays what arrived meanwhile. Caller's thread.
    /// The connection holds the watcher from here on.
    func start() throws {
        let mask = pa_subscription_mask_t(rawValue: PA_SUBSCRIPTION_MASK_SINK.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue)
        try control.follow(mask, finishing: continuation, initial: {
            let name = try control.defaultSinkName()
            let all = try control.sinks()
            return {
                self.defaultName = name
                for s in all { self.sinks[s.index] = s }
            }
        }, handle: handle)
    }

    /// Notes that this process is making `name` the default (caller's thread).
    func expectOverride(to name: String) {
        control.withLock { expectedOverrides.append(name) }
    }

    private func route(_ s: SinkSnapshot) -> AudioOutputRoute { AudioOutputRoute(s, defaultName: defaultName) }

    /// One subscription event. Mainloop thread, lock held.
    private func handle(_ e: PulseEvent) {
        let index = e.index
        if e.facility == PA_SUBSCRIPTION_EVENT_SINK {
            if e.kind == PA_SUBSCRIPTION_EVENT_REMOVE {
                guard let old = sinks.removeValue(forKey: index) else { return }
                continuation.yield(AudioRouteChange(reason: .oldDeviceUnavailable, route: nil, previousRoute: route(old)))
            } else {
                control.requestSink(index: index) { [weak self] s in
                    if let s { self?.sinkSeen(s) }
                }
            }
        } else if e.facility == PA_SUBSCRIPTION_EVENT_SERVER {
            control.requestDefaultSinkName { [weak self] name in self?.defaultSeen(name) }
        }
    }

    private func sinkSeen(_ new: SinkSnapshot) {
        let old = sinks[new.index]
        sinks[new.index] = new
        guard let old else {
            continuation.yield(AudioRouteChange(reason: .newDeviceAvailable, route: route(new), previousRoute: nil))
            return
        }
        let before = route(old), after = route(new)
        guard before != after else { return } // a volume or mute change, or nothing that routes care about
        if after.portType == .headphones && before.portType != .headphones {
            continuation.yield(AudioRouteChange(reason: .newDeviceAvailable, route: after, previousRoute: before))
        } else if before.portType == .headphones && after.portType != .headphones {
            continuation.yield(AudioRouteChange(reason: .oldDeviceUnavailable, route: after, previousRoute: before))
        } else {
            continuation.yield(AudioRouteChange(reason: .routeConfigurationChange, route: after, previousRoute: before))
        }
    }

    private func defaultSeen(_ name: String?) {
        guard name != defaultName else { return }
        let previous = sinks.values.first { $0.name == defaultName }.map(route)
        defaultName = name
        var reason = AudioRouteChange.Reason.defaultOutputChanged
        if let name, let i = expectedOverrides.firstIndex(of: name) {
            expectedOverrides.removeSubrange(...i)
            reason = .override
        }
        if let name, let s = sinks.values.first(where: { $0.name == name }) {
            continuation.yield(AudioRouteChange(reason: reason, route: route(s), previousRoute: previous))
        } else if let name {
            // A sink this stream has not read yet: read it first.
            control.requestSink(named: name) { [weak self] s in
                guard let self else { return }
                if let s { sinks[s.index] = s }
                continuation.yield(AudioRouteChange(reason: reason, route: s.map(route), previousRoute: previous))
            }
        } else {
            continuation.yield(AudioRouteChange(reason: reason, route: nil, previousRoute: previous))
        }
    }
}
