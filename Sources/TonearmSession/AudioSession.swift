// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Logging
import Synchronization
import TonearmCore

/// The process's audio session: what kind of audio it makes (``Category``, ``Mode``,
/// ``CategoryOptions``), whether it is active, and the interruptions and duck requests it gets
/// from other Tonearm sessions — Tonearm's counterpart of `AVAudioSession.sharedInstance()`.
///
/// ## What the categories do on Linux
/// - An **exclusive** session — ``Category/soloAmbient``, or ``Category/playback`` /
///   ``Category/playAndRecord`` without ``CategoryOptions/mixWithOthers`` (nor an option that
///   implies it) — interrupts the other Tonearm sessions that are active and not mixable when it
///   becomes active (or changes category while active). They get ``Interruption/began`` and
///   become inactive. When the exclusive session deactivates, they get
///   ``Interruption/ended(shouldResume:)``, with `shouldResume` true only if it deactivated with
///   ``SetActiveOptions/notifyOthersOnDeactivation``; if its process ends or it loses the bus,
///   they get `.ended(shouldResume: false)`.
/// - A **mixable** session — ``Category/ambient``, or any category with
///   ``CategoryOptions/mixWithOthers``, ``CategoryOptions/duckOthers`` or
///   ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` — is never interrupted by other
///   Tonearm sessions, except that a session with
///   ``CategoryOptions/interruptSpokenAudioAndMixWithOthers`` interrupts active sessions whose
///   mode is ``Mode/spokenAudio`` (unless they are ambient).
/// - ``CategoryOptions/duckOthers``: while such a session is active, every other Tonearm session
///   (active or not) gets ``Ducking/duckRequested(level:)`` on ``ducking``, then
///   ``Ducking/duckEnded`` when it deactivates: players lower their volume to `level` times its
///   value and restore it exactly.
/// - ``Category/record`` and ``Category/multiRoute`` interrupt nobody (they are interrupted like
///   any non-mixable session).
///
/// ## Interruptions by the sound server
/// PulseAudio (and PipeWire's PulseAudio server) interrupts streams itself: with
/// `module-role-cork`, a `phone` stream starting sends `request-cork` to the `music` and `video`
/// streams, and `request-uncork` when it ends. Only the connection that owns a stream hears these,
/// so the players pass them on: a player that follows a session calls
/// ``reportServerInterruption(began:)``, and the session reports ``Interruption/began`` (it
/// becomes inactive) and then ``Interruption/ended(shouldResume:)`` with `shouldResume` true,
/// like an interruption by another session. Every player following the session pauses — and
/// corks its stream, which the server requires before it sends `request-uncork` — and plays on
/// after. Several streams asked at once make one interruption; it ends at the first
/// `request-uncork`. A server interruption and interruptions by other sessions add up: the
/// session hears `ended` only when the last of them is over.
///
/// ## Stream properties
/// Every PulseAudio stream of the process should carry ``streamProperties``; the players add
/// them to the streams they open. `media.role` follows the mode first, then the category:
///
/// | Category / mode                                            | `media.role` | extra                      |
/// |------------------------------------------------------------|--------------|----------------------------|
/// | ambient, soloAmbient, playback, record, playAndRecord, multiRoute with mode default | `music` | |
/// | any category, mode spokenAudio                              | `music`      | `tonearm.mode=spokenAudio` |
/// | mode moviePlayback or videoRecording                        | `video`      |                            |
/// | mode voiceChat or videoChat                                 | `phone`      | `filter.want=echo-cancel`  |
/// | mode gameChat                                               | `game`       |                            |
/// | mode measurement                                            | `production` |                            |
/// | system sounds (`SystemSound`, not a category)               | `event`      |                            |
///
/// Every set also holds `tonearm.category` and `tonearm.mode` (the raw values).
///
/// ## The bus
/// Sessions find each other on the D-Bus session bus: each owns
/// `org.tonearm.AudioSession.s<identifier>` (characters outside `[A-Za-z0-9_]` become `_`) and
/// emits, from `/org/tonearm/AudioSession` on interface `org.tonearm.AudioSession`, the signals
/// `Activated(s identifier, s category, s mode, u options, d duckLevel, t time)` whenever it
/// becomes active or changes its category while active (`time`: `CLOCK_MONOTONIC` in ns, the
/// same clock in every process; only an announcement later than a session's own interrupts it,
/// so two sessions activating at once do not interrupt each other — the later one wins), and `Deactivated(s identifier, b notifyOthers)`
/// when it deactivates or is interrupted. Without a session bus (none configured, or it does not
/// answer) everything works locally: ``setActive(_:options:)`` succeeds, ``isActive`` and
/// ``streamProperties`` are right (``isConnectedToBus`` is false), and the sessions of the
/// process that have the same ``bus`` still meet — in the process, with the same rules as on the
/// bus — so a video's session interrupts the music player's session of the same process and lets
/// it resume; sessions of other processes are not reached. A session with ``Bus/none`` meets
/// nobody.
///
/// Threading: every member may be used from any thread. The bus is connected on the first call
/// of ``setActive(_:options:)``, ``setCategory(_:mode:options:)``, ``interruptions``,
/// ``ducking`` or ``isConnectedToBus``, which then blocks until the bus has answered (libdbus's
/// own timeout bounds it). A dedicated thread (`tonearm-session`) waits on the connection's
/// socket — nothing polls — and yields the events of ``interruptions`` and ``ducking`` from
/// there. Signals are sent by that thread, shortly after the call that caused them returns.
public final class AudioSession: Sendable {
    /// What the process's audio is for (`AVAudioSession.Category`). As on iOS, only ``record``,
    /// ``playAndRecord`` and ``multiRoute`` let an engine's input node open (`PulseInput`, module
    /// TonearmRecord, checks it when the engine starts; the session need not be active for it).
    public enum Category: String, Sendable, Hashable, CaseIterable, Codable {
        /// Audio that mixes with others and is silenced by the ring/silent switch on iOS.
        case ambient
        /// The default: non-mixable playback, exclusive.
        case soloAmbient
        /// Playback that is central to the app; exclusive unless mixWithOthers.
        case playback
        /// Recording only; interrupts nobody.
        case record
        /// Recording and playback (voice chat); exclusive unless mixWithOthers.
        case playAndRecord
        /// Several outputs at once; interrupts nobody.
        case multiRoute
    }

    /// A specialisation of the category (`AVAudioSession.Mode`).
    public enum Mode: String, Sendable, Hashable, CaseIterable, Codable {
        case `default`
        /// Podcasts and audio books (playback).
        case spokenAudio
        /// Films (playback).
        case moviePlayback
        /// Voice over IP (playAndRecord).
        case voiceChat
        /// Video calls (playAndRecord).
        case videoChat
        /// Unprocessed input and output for measuring (any category).
        case measurement
        /// Game voice chat (playAndRecord).
        case gameChat
        /// Recording video (record, playAndRecord).
        case videoRecording

        /// The categories this mode may be used with.
        var allowedCategories: Set<Category> {
            switch self {
            case .default, .measurement: Set(Category.allCases)
            case .spokenAudio, .moviePlayback: [.playback]
            case .voiceChat, .videoChat, .gameChat: [.playAndRecord]
            case .videoRecording: [.record, .playAndRecord]
            }
        }
    }

    /// How the session behaves towards the others (`AVAudioSession.CategoryOptions`). Allowed
    /// with ``Category/playback``, ``Category/playAndRecord`` and ``Category/multiRoute`` only.
    public struct CategoryOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Mix with the other sessions instead of interrupting them.
        public static let mixWithOthers = CategoryOptions(rawValue: 1)
        /// Lower the other sessions while active (implies mixWithOthers).
        public static let duckOthers = CategoryOptions(rawValue: 2)
        /// Interrupt spoken-audio sessions, mix with the rest (implies mixWithOthers).
        public static let interruptSpokenAudioAndMixWithOthers = CategoryOptions(rawValue: 4)
    }

    /// Options of ``AudioSession/setActive(_:options:)``.
    public struct SetActiveOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// On deactivation, tell the sessions this one interrupted that they may resume.
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1)
    }

    /// An interruption by another session.
    public enum Interruption: Sendable, Hashable {
        /// Another session took over: this one is now inactive; players pause.
        case began
        /// The interruption is over; resume (after ``AudioSession/setActive(_:options:)``)
        /// when `shouldResume`.
        case ended(shouldResume: Bool)
    }

    /// A duck request by another session.
    public enum Ducking: Sendable, Hashable {
        /// Play at `level` (0...1) times the current volume.
        case duckRequested(level: Float)
        /// Restore the volume exactly as it was.
        case duckEnded
    }

    /// Which D-Bus bus the sessions meet on.
    public enum Bus: Sendable, Hashable {
        /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`;
        /// with neither, no bus (never X11 autolaunch).
        case session
        /// The bus at this address (tests use a private bus).
        case address(String)
        /// No bus: the session works alone and gets no cross-session events, not even from the
        /// sessions of its own process.
        case none
    }

    /// The level ``CategoryOptions/duckOthers`` asks the other sessions to play at (about -14 dB).
    public static let duckLevel: Float = 0.2

    /// The process's session: identifier = the process id, the session bus, the default
    /// PulseAudio server.
    public static let shared = AudioSession()

    /// Names the session on the bus; the process id unless given.
    public let identifier: String
    /// Where the session's warnings go (given to ``init(identifier:bus:pulseServer:logger:)``).
    let logger: Logger
    /// The bus the session uses.
    public let bus: Bus
    /// The PulseAudio server the process's streams use (nil: libpulse's default); the one
    /// whose streams carry ``streamProperties``.
    public let pulseServer: String?
    private let core: SessionCore
    private let routes: AudioRoutes
    private let preferredInputState = Mutex<AudioInputRoute?>(nil)
    /// ``recordPermission``'s answer once asked.
    let recordPermissionState = Mutex(RecordPermission.undetermined)
    /// Counts ``setActive(_:options:)`` calls: a play's activation that waited for the bus
    /// gives way to any made meanwhile (``activateForPlay()``).
    private let activations = Atomic<UInt64>(0)

    /// A session. `identifier` names it on the bus instead of the process id — for tests, which
    /// run several sessions in one process (two sessions with the same identifier on one bus do
    /// not see each other). Connects to `bus` on first use, not here.
    ///
    /// `logger` receives the session's warnings (a refused ``setCategory(_:mode:options:)``).
    public init(identifier: String? = nil, bus: Bus = .session, pulseServer: String? = nil,
                logger: Logger = Logger(label: "tonearm.session")) {
        let id = identifier ?? String(getpid())
        self.logger = logger
        self.identifier = id
        self.bus = bus
        self.pulseServer = pulseServer
        core = SessionCore(identifier: id, bus: bus)
        routes = AudioRoutes(server: pulseServer)
    }

    deinit { core.stop() }

    /// The category (default ``Category/soloAmbient``).
    public var category: Category { core.snapshot.category }
    /// The mode (default ``Mode/default``).
    public var mode: Mode { core.snapshot.mode }
    /// The options (default none).
    public var categoryOptions: CategoryOptions { core.snapshot.options }
    /// Whether the session is active (false after an interruption began).
    public var isActive: Bool { core.snapshot.active }
    /// Whether the session reached the bus (connects if not done yet; blocks meanwhile).
    public var isConnectedToBus: Bool { core.ensureBus() }

    /// Sets the category, mode and options. While active, the session announces itself again:
    /// an exclusive category now interrupts the others, duckOthers now ducks them (or stops).
    ///
    /// Throws ``TonearmError/invalidArgument(_:)`` when the mode or the options do not go with
    /// the category (see ``Mode`` and ``CategoryOptions``); nothing changes then.
    ///
    /// `.ambient` with `.mixWithOthers` is accepted, as iOS accepts it: Apple's documentation
    /// says the option can be set explicitly only with playback, playAndRecord and multiRoute,
    /// and that ambient sets it by itself; it documents no error for naming it anyway. Developers'
    /// reports show iOS running `setCategory(.ambient, options: .mixWithOthers)`: the Flutter
    /// plugin report ryanheise/audio_session#112 configures exactly that and its sounds play (its
    /// problem is elsewhere), and apache/cordova-plugin-media#306 proposes it for mixing; no report
    /// found shows iOS refusing it. It is redundant, not wrong, so it is accepted. Refusing it made
    /// the seed's code, which swallows the error, stay exclusive and interrupt the other player.
    ///
    /// Every refusal is also logged as a warning (`logger`, by default swift-log's handler on
    /// stderr): ported code often writes `try?` here, and a refused category silently changes
    /// how the app mixes with others.
    public func setCategory(_ category: Category, mode: Mode = .default, options: CategoryOptions = []) throws {
        do {
            try Self.check(category, mode: mode, options: options)
        } catch {
            logger.warning("setCategory(\(category.rawValue), mode: \(mode.rawValue), options: \(options.rawValue)) refused: \(error) — the session keeps \(self.category.rawValue)",
                           metadata: ["session": "\(identifier)"])
            throw error
        }
        _ = core.ensureBus()
        core.setCategory(category, mode: mode, options: options)
    }

    /// Whether `mode` and `options` go with `category` (see ``setCategory(_:mode:options:)``).
    static func check(_ category: Category, mode: Mode, options: CategoryOptions) throws {
        guard mode.allowedCategories.contains(category) else {
            throw TonearmError.invalidArgument("mode \(mode.rawValue) cannot be used with category \(category.rawValue)")
        }
        if options.rawValue & ~UInt32(7) != 0 {
            throw TonearmError.invalidArgument("unknown category options \(options.rawValue)")
        }
        // Ambient mixes by itself; naming that explicitly changes nothing.
        let effective = category == .ambient ? options.subtracting(.mixWithOthers) : options
        if !effective.isEmpty, ![Category.playback, .playAndRecord, .multiRoute].contains(category) {
            throw TonearmError.invalidArgument("category options are allowed with playback, playAndRecord and multiRoute only (and mixWithOthers with ambient, which mixes anyway), not \(category.rawValue)")
        }
    }

    /// Activates or deactivates the session. Activating announces it (interrupting or ducking
    /// the others as its category says) and ends a pending interruption of this session;
    /// deactivating tells the others, which resume when `options` has
    /// ``SetActiveOptions/notifyOthersOnDeactivation``. Activating an active session again, or
    /// deactivating an inactive one, does nothing.
    ///
    /// Deactivating is synchronous, as `AVAudioSession.setActive(false)` is: it returns once the
    /// deactivation is on the session bus (at most a second), so a process that deactivates and
    /// then exits is heard as having deactivated — with `notifyOthersOnDeactivation`, the music it
    /// interrupted resumes — and not merely as gone (which ends interruptions without resuming).
    /// Activating does not wait for the bus (a player's first sample does not wait for D-Bus).
    ///
    /// Throws nothing today (without a bus it succeeds locally); `throws` is kept for
    /// `AVAudioSession` compatibility and future checks against the sound server.
    public func setActive(_ active: Bool, options: SetActiveOptions = []) throws {
        activations.add(1, ordering: .sequentiallyConsistent)
        _ = core.ensureBus()
        core.setActive(active, notifyOthers: options.contains(.notifyOthersOnDeactivation))
        if !active { core.waitUntilDelivered(timeout: 1) }
    }

    /// Activations and deactivations queued for the session bus and not yet written to it (for
    /// tests: a deactivation returns with none left).
    package var undeliveredAnnouncements: UInt64 { core.undeliveredAnnouncements }

    /// Interruptions by other sessions, from now on. Each access returns a new stream; it ends
    /// when the session is released. Connects to the bus first (blocks meanwhile).
    public var interruptions: AsyncStream<Interruption> {
        _ = core.ensureBus()
        let (stream, continuation) = AsyncStream.makeStream(of: Interruption.self, bufferingPolicy: .unbounded)
        core.subscribe(interruptions: continuation)
        return stream
    }

    /// A player's `play()`: activates the session as `setActive(true)` does, never waiting for
    /// the bus — at once when the session has connected to it already (or knows there is none);
    /// else on a task of its own once connected, unless the session was activated or
    /// deactivated meanwhile (a short play that ended and deactivated stays deactivated).
    package func activateForPlay() {
        if core.isBusSettled {
            if !isActive { try? setActive(true) }
            return
        }
        let ticket = activations.load(ordering: .sequentiallyConsistent)
        Task.detached { [self] in
            _ = core.ensureBus()
            guard activations.load(ordering: .sequentiallyConsistent) == ticket, !isActive else { return }
            try? setActive(true)
        }
    }

    /// Interruptions and duck requests from now on, subscribed at once without connecting to
    /// the bus (the in-process sessions reach them at once; other processes' once something
    /// connects — ``setActive(_:options:)`` does). For a player starting to follow the session
    /// on its play path, which must not wait for the bus.
    package func subscribeWithoutConnecting() -> (interruptions: AsyncStream<Interruption>, ducking: AsyncStream<Ducking>) {
        let (i, ic) = AsyncStream.makeStream(of: Interruption.self, bufferingPolicy: .unbounded)
        core.subscribe(interruptions: ic)
        let (d, dc) = AsyncStream.makeStream(of: Ducking.self, bufferingPolicy: .unbounded)
        core.subscribe(ducking: dc)
        return (i, d)
    }

    /// Duck requests by other sessions, from now on. Each access returns a new stream; it ends
    /// when the session is released. Connects to the bus first (blocks meanwhile).
    public var ducking: AsyncStream<Ducking> {
        _ = core.ensureBus()
        let (stream, continuation) = AsyncStream.makeStream(of: Ducking.self, bufferingPolicy: .unbounded)
        core.subscribe(ducking: continuation)
        return stream
    }

    /// The output the process's audio goes to now (`AVAudioSession.currentRoute`): the server's
    /// default output, with its port type; nil when the server has no output at all. Blocks while
    /// it asks the server. Throws ``TonearmError/outputUnavailable(driver:reason:)`` without a
    /// server.
    public var currentRoute: AudioOutputRoute? {
        get throws { try routes.currentOutput() }
    }

    /// The inputs a recording can read from (`AVAudioSession.availableInputs`): the server's
    /// sources that are not the monitor of an output, the default one marked (the monitors are
    /// in ``AudioRoutes/inputs()``; a recorder may also name one). Blocks while it asks the
    /// server. Throws ``TonearmError/outputUnavailable(driver:reason:)`` without a server.
    public var availableInputs: [AudioInputRoute] {
        get throws { try routes.inputs().filter { $0.monitorOf == nil } }
    }

    /// The input recordings of this process use when they name none
    /// (`AVAudioSession.preferredInput`); nil: the server's default input.
    public var preferredInput: AudioInputRoute? { preferredInputState.withLock { $0 } }

    /// Chooses the input recordings use when they name none (`AVAudioSession.setPreferredInput`):
    /// one of ``availableInputs`` or a monitor from ``AudioRoutes/inputs()``; nil goes back to the
    /// server's default. For this process only: the server's default input is left as it is
    /// (``AudioRoutes/setDefaultInput(named:)`` changes it for every program). Throws
    /// ``TonearmError/invalidArgument(_:)`` naming the inputs there are when the server has no
    /// such input, ``TonearmError/outputUnavailable(driver:reason:)`` without a server.
    public func setPreferredInput(_ input: AudioInputRoute?) throws {
        guard let input else {
            preferredInputState.withLock { $0 = nil }
            return
        }
        let all = try routes.inputs()
        guard let found = all.first(where: { $0.name == input.name }) else {
            throw TonearmError.invalidArgument("no input named '\(input.name)'; inputs: \(all.isEmpty ? "none" : all.map(\.name).joined(separator: ", "))")
        }
        preferredInputState.withLock { $0 = found }
    }

    /// Route changes from now on (`AVAudioSession.routeChangeNotification`): everything
    /// ``AudioRoutes/changes`` reports for the session's server — outputs appearing and going
    /// away, headphones plugged in and out, the default output changing — and
    /// ``AudioRouteChange/Reason/categoryChange`` when ``setCategory(_:mode:options:)`` changes the
    /// category or the mode (with ``currentRoute`` as both `route` and `previousRoute`: on Linux a
    /// category does not choose the output).
    ///
    /// Each access makes a new stream, subscribed before the getter returns; it ends when the
    /// server connection is lost or the session is released, and stops its work when dropped.
    /// Events come from the route connection's thread and from the caller of `setCategory`
    /// through a task of the stream's own. Throws ``TonearmError/outputUnavailable(driver:reason:)``
    /// without a server; blocks while it connects.
    public var routeChanges: AsyncStream<AudioRouteChange> {
        get throws {
            enum Feed: Sendable { case route(AudioRouteChange), category, done }
            let server = try routes.changes
            let (feed, feedIn) = AsyncStream.makeStream(of: Feed.self, bufferingPolicy: .bufferingNewest(256))
            guard let id = core.subscribe(categoryChanges: { ended in feedIn.yield(ended ? .done : .category) }) else {
                return AsyncStream { $0.finish() }
            }
            let (stream, out) = AsyncStream.makeStream(of: AudioRouteChange.self, bufferingPolicy: .bufferingNewest(256))
            let forward = Task.detached {
                for await change in server { feedIn.yield(.route(change)) }
                feedIn.yield(.done)
            }
            let routes = self.routes
            let relay = Task.detached {
                for await item in feed {
                    switch item {
                    case .route(let change): out.yield(change)
                    case .category:
                        let route = try? routes.currentOutput()
                        out.yield(AudioRouteChange(reason: .categoryChange, route: route, previousRoute: route))
                    case .done:
                        out.finish()
                        return
                    }
                }
                out.finish()
            }
            let core = self.core
            // Cleanup off the terminating thread (see SessionCore.subscribe).
            out.onTermination = { _ in
                DispatchQueue.global().async {
                    core.unsubscribe(category: id)
                    forward.cancel()
                    relay.cancel()
                    feedIn.finish()
                }
            }
            return stream
        }
    }

    /// Reports that the sound server asked one of the process's streams to stop for another
    /// (`began`: PulseAudio's `request-cork`) or that it may go on (`request-uncork`). The session
    /// then reports ``Interruption/began`` (becoming inactive and telling the other sessions) or
    /// ``Interruption/ended(shouldResume:)`` with `shouldResume` true. Players that follow the
    /// session call it from their output's event thread; an app with an output of its own may
    /// too. Any thread; never blocks (it does not connect to the bus).
    public func reportServerInterruption(began: Bool) {
        core.serverInterruption(began: began)
    }

    /// The PulseAudio stream properties every stream of the process should carry now (see the
    /// table in the type's documentation).
    public var streamProperties: [String: String] {
        let s = core.snapshot
        return Self.streamProperties(category: s.category, mode: s.mode)
    }

    /// The stream properties for a category and mode (see the table in the type's documentation).
    public static func streamProperties(category: Category, mode: Mode) -> [String: String] {
        var p = ["tonearm.category": category.rawValue, "tonearm.mode": mode.rawValue]
        switch mode {
        case .default, .spokenAudio: p["media.role"] = "music"
        case .moviePlayback, .videoRecording: p["media.role"] = "video"
        case .voiceChat, .videoChat:
            p["media.role"] = "phone"
            p["filter.want"] = "echo-cancel"
        case .gameChat: p["media.role"] = "game"
        case .measurement: p["media.role"] = "production"
        }
        return p
    }

    /// Whether a session with these settings interrupts the others when it becomes active.
    static func isExclusive(_ category: Category, _ options: CategoryOptions) -> Bool {
        switch category {
        case .soloAmbient: true
        case .playback, .playAndRecord: !mixes(category, options)
        case .ambient, .record, .multiRoute: false
        }
    }

    /// Whether a session with these settings mixes with the others (is not interrupted by them).
    static func mixes(_ category: Category, _ options: CategoryOptions) -> Bool {
        category == .ambient || !options.isDisjoint(with: [.mixWithOthers, .duckOthers, .interruptSpokenAudioAndMixWithOthers])
    }
}
