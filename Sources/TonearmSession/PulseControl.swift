// SPDX-License-Identifier: GPL-3.0-or-later
import CPulse
import TonearmOutput
import Dispatch
import Glibc
import TonearmCore

/// A sink as the server described it, copied out of libpulse's `pa_sink_info`.
struct SinkSnapshot: Sendable, Hashable {
    var index: UInt32
    var name: String
    var description: String
    var sampleRate: Double
    var channelCount: Int
    var volume: pa_cvolume
    var muted: Bool
    var monitorSource: String
    var driver: String
    var isNetworkFlag: Bool
    var activePortName: String?
    var activePortType: UInt32?
    var properties: [String: String]

    init(_ info: pa_sink_info) {
        index = info.index
        name = info.name.map { String(cString: $0) } ?? ""
        description = info.description.map { String(cString: $0) } ?? name
        sampleRate = Double(info.sample_spec.rate)
        channelCount = Int(info.sample_spec.channels)
        volume = info.volume
        muted = info.mute != 0
        monitorSource = info.monitor_source_name.map { String(cString: $0) } ?? ""
        driver = info.driver.map { String(cString: $0) } ?? ""
        isNetworkFlag = info.flags.rawValue & PA_SINK_NETWORK.rawValue != 0
        if let port = info.active_port {
            activePortName = port.pointee.name.map { String(cString: $0) }
            activePortType = port.pointee.type
        }
        properties = PulseControl.dictionary(info.proplist)
    }

    static func == (a: SinkSnapshot, b: SinkSnapshot) -> Bool {
        a.index == b.index && a.name == b.name && a.description == b.description && a.sampleRate == b.sampleRate
            && a.channelCount == b.channelCount && a.muted == b.muted && a.monitorSource == b.monitorSource
            && a.driver == b.driver && a.isNetworkFlag == b.isNetworkFlag && a.activePortName == b.activePortName
            && a.activePortType == b.activePortType && a.properties == b.properties
            && PulseControl.volumes(a.volume) == PulseControl.volumes(b.volume)
    }

    func hash(into h: inout Hasher) {
        h.combine(index)
        h.combine(name)
    }
}

/// A source (an input, or an output's monitor) as the server described it, copied out of
/// libpulse's `pa_source_info`.
struct SourceSnapshot: Sendable, Hashable {
    var index: UInt32
    var name: String
    var description: String
    var sampleRate: Double
    var channelCount: Int
    var driver: String
    var isNetworkFlag: Bool
    /// The sink it monitors, by name (nil: a real input).
    var monitorOf: String?
    /// Each channel's volume (`pa_volume_t`).
    var volumes: [UInt32]
    var muted: Bool
    var activePortName: String?
    var activePortType: UInt32?
    var properties: [String: String]

    init(_ info: pa_source_info, sinkNames: [UInt32: String]) {
        index = info.index
        name = info.name.map { String(cString: $0) } ?? ""
        description = info.description.map { String(cString: $0) } ?? name
        sampleRate = Double(info.sample_spec.rate)
        channelCount = Int(info.sample_spec.channels)
        driver = info.driver.map { String(cString: $0) } ?? ""
        isNetworkFlag = info.flags.rawValue & PA_SOURCE_NETWORK.rawValue != 0
        volumes = PulseControl.volumes(info.volume)
        muted = info.mute != 0
        if info.monitor_of_sink != UInt32.max { monitorOf = sinkNames[info.monitor_of_sink] ?? "#\(info.monitor_of_sink)" }
        if let port = info.active_port {
            activePortName = port.pointee.name.map { String(cString: $0) }
            activePortType = port.pointee.type
        }
        properties = PulseControl.dictionary(info.proplist)
    }
}

/// A playback stream (sink input) as the server described it.
struct SinkInputSnapshot: Sendable, Hashable {
    var index: UInt32
    var sink: UInt32
    var processID: pid_t?
    var name: String
}

/// One request to the server in flight: what its callbacks collected, whether it is done, and
/// whether its deadline passed. Touched only with the mainloop lock held (by the caller that
/// issued it and by libpulse's callbacks on the mainloop thread).
final class PulseRequest: @unchecked Sendable {
    unowned let control: PulseControl
    var done = false
    var succeeded = true
    var sinks: [SinkSnapshot] = []
    var inputs: [SinkInputSnapshot] = []
    var defaultSinkName: String?
    var defaultSourceName: String?
    var sources: [SourceSnapshot] = []
    /// Sink names by index, to name what a source monitors.
    var sinkNames: [UInt32: String] = [:]
    /// Called once, on the mainloop thread with the lock held, when the request completes.
    var completion: ((PulseRequest) -> Void)?

    init(control: PulseControl) { self.control = control }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ p: UnsafeMutableRawPointer?) -> PulseRequest {
        Unmanaged<PulseRequest>.fromOpaque(p!).takeUnretainedValue()
    }

    /// Marks the request finished, runs its completion, forgets it and wakes the waiters.
    /// Mainloop thread, lock held.
    func finish(success: Bool = true) {
        guard !done else { return }
        done = true
        succeeded = success
        completion?(self)
        completion = nil
        control.forget(self)
    }
}

/// A connection to a PulseAudio server for control requests (listing sinks and streams, choosing
/// the default sink, moving streams, sink volume and mute) and for subscription events, on
/// libpulse's asynchronous API, over a ``PulseConnection`` (a `pa_threaded_mainloop` of its own).
///
/// Threading:
/// - The blocking calls (`sinks()`, `defaultSinkName()`, `setDefaultSink`, …) may be called from
///   any thread except the mainloop thread (one caller or several: each waits for its own
///   request). Each waits at most `timeout` seconds and throws
///   ``TonearmError/outputUnavailable(driver:reason:)`` saying what failed.
/// - The `request…` calls and `onEvent` / `onFailure` run with the mainloop lock held: the
///   handlers run on the mainloop thread and must not block; they issue further requests with
///   the `request…` calls, whose completions also run on the mainloop thread.
/// - `close()` may be called from any thread, the mainloop thread included (then the teardown
///   happens on a dispatch queue).
final class PulseControl: @unchecked Sendable {
    /// The server (`unix:/path`, `tcp:host`, …); nil for libpulse's default (`PULSE_SERVER`,
    /// then the usual socket). Never autospawned.
    var server: String? { connection.server }
    /// How long each request (and the connection) may take, in seconds.
    let timeout: Double

    private let connection: PulseConnection
    // Guarded by the mainloop lock.
    private var pending: [ObjectIdentifier: PulseRequest] = [:]
    /// Subscription events (facility and type masked out of the event type, and the index).
    /// Mainloop thread, lock held.
    var onEvent: ((pa_subscription_event_type_t, pa_subscription_event_type_t, UInt32) -> Void)? {
        get { connection.onEvent }
        set { connection.onEvent = newValue }
    }
    /// Called once when the connection fails or the server goes away. Mainloop thread, lock held.
    var onFailure: ((String) -> Void)?

    /// The server as named in messages.
    private var serverText: String { connection.serverText }

    /// Connects to `server` and waits (at most `timeout` seconds) until the connection is ready.
    /// Throws ``TonearmError/outputUnavailable(driver:reason:)`` when no server answers, it refuses
    /// the connection, or it does not answer in time. Blocks the calling thread.
    init(server: String?, clientName: String = "Tonearm", timeout: Double = 2) throws {
        self.timeout = max(timeout, 0.05)
        let text: String
        if let server {
            text = "the sound server at \(server)"
        } else if let env = getenv("PULSE_SERVER") {
            text = "the sound server at \(String(cString: env)) (PULSE_SERVER)"
        } else {
            text = "the sound server (PulseAudio/PipeWire)"
        }
        connection = try PulseConnection(server: server, serverText: text, clientName: clientName,
                                         timeout: self.timeout, driver: "pulse")
        connection.withLock {
            connection.onLost = { [unowned self] reason in
                self.onFailure?("the connection to \(self.serverText) was lost: \(reason)")
            }
        }
    }

    deinit { teardown() }

    static func unavailable(_ reason: String) -> TonearmError {
        .outputUnavailable(driver: "pulse", reason: reason)
    }

    /// libpulse's last error as text. Lock held.
    private func errorText() -> String { connection.errorText }

    private var context: OpaquePointer? { connection.context }

    /// Whether the connection is ready (not failed, not closed).
    var isConnected: Bool { withLock { connection.isReady } }

    /// Runs `body` with the mainloop lock held (directly when on the mainloop thread).
    func withLock<R>(_ body: () throws -> R) rethrows -> R { try connection.withLock(body) }

    // MARK: Requests

    /// Drops a finished request and wakes the waiters. Lock held.
    fileprivate func forget(_ r: PulseRequest) {
        pending[ObjectIdentifier(r)] = nil
        connection.signal()
    }

    /// Starts a request: `issue` gets the context and the request's userdata and returns the
    /// libpulse operation (nil when libpulse refused it). Lock held. Returns the operation, which
    /// the caller must unref, or nil after marking the request failed.
    private func start(_ r: PulseRequest, _ what: String,
                       _ issue: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) -> OpaquePointer? {
        guard let ctx = context, pa_context_get_state(ctx) == PA_CONTEXT_READY else {
            r.done = true
            r.succeeded = false
            return nil
        }
        pending[ObjectIdentifier(r)] = r
        guard let op = issue(ctx, r.userdata) else {
            pending[ObjectIdentifier(r)] = nil
            r.done = true
            r.succeeded = false
            return nil
        }
        return op
    }

    /// Issues a request and waits for it (bounded by `timeout`). Never on the mainloop thread.
    /// Throws when the connection is gone, libpulse refuses the request, the server reports a
    /// failure, or it does not answer in time; the message says which request (`what`).
    private func perform(_ what: String, request given: PulseRequest? = nil,
                         _ issue: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) throws -> PulseRequest {
        guard connection.mainloop != nil else { throw Self.unavailable("\(what): the connection is closed") }
        precondition(!connection.onMainloopThread, "PulseControl: blocking request on the mainloop thread")
        let r = given ?? PulseRequest(control: self)
        return try withLock {
            guard let op = start(r, what, issue) else {
                throw Self.unavailable("\(what): \(connection.isReady ? errorText() : "the connection to \(serverText) is gone")")
            }
            let timedOut = connection.wait(atMost: timeout) { r.done || pa_operation_get_state(op) != PA_OPERATION_RUNNING }
            if !r.done { pa_operation_cancel(op) }
            pa_operation_unref(op)
            pending[ObjectIdentifier(r)] = nil
            if r.done && r.succeeded { return r }
            if r.done { throw Self.unavailable("\(what): the server refused (\(errorText()))") }
            if timedOut { throw Self.unavailable("\(what): \(serverText) did not answer within \(timeout) s") }
            throw Self.unavailable("\(what): the connection to \(serverText) was lost (\(errorText()))")
        }
    }

    /// Issues a request from the mainloop thread (or with the lock held) without waiting:
    /// `completion` runs on the mainloop thread when it is done (not at all if the connection dies first).
    private func request(_ what: String, completion: @escaping (PulseRequest) -> Void,
                         _ issue: (OpaquePointer, UnsafeMutableRawPointer) -> OpaquePointer?) {
        withLock {
            let r = PulseRequest(control: self)
            r.completion = completion
            if let op = start(r, what, issue) { pa_operation_unref(op) }
        }
    }

    // C callbacks, shared by the blocking and the non-blocking forms.

    private static let sinkCallback: pa_sink_info_cb_t = { _, info, eol, ud in
        let r = PulseRequest.from(ud)
        if eol != 0 {
            r.finish(success: eol > 0 || !r.sinks.isEmpty)
        } else if let info {
            r.sinks.append(SinkSnapshot(info.pointee))
        }
    }

    private static let inputCallback: pa_sink_input_info_cb_t = { _, info, eol, ud in
        let r = PulseRequest.from(ud)
        if eol != 0 {
            r.finish(success: eol > 0)
        } else if let info {
            let props = PulseControl.dictionary(info.pointee.proplist)
            r.inputs.append(SinkInputSnapshot(index: info.pointee.index, sink: info.pointee.sink,
                                              processID: props["application.process.id"].flatMap { pid_t($0) },
                                              name: info.pointee.name.map { String(cString: $0) } ?? ""))
        }
    }

    private static let serverCallback: pa_server_info_cb_t = { _, info, ud in
        let r = PulseRequest.from(ud)
        r.defaultSinkName = info?.pointee.default_sink_name.map { String(cString: $0) }
        r.defaultSourceName = info?.pointee.default_source_name.map { String(cString: $0) }
        r.finish(success: info != nil)
    }

    private static let sourceCallback: pa_source_info_cb_t = { _, info, eol, ud in
        let r = PulseRequest.from(ud)
        if eol != 0 {
            r.finish(success: eol > 0 || !r.sources.isEmpty)
        } else if let info {
            r.sources.append(SourceSnapshot(info.pointee, sinkNames: r.sinkNames))
        }
    }

    private static let successCallback: pa_context_success_cb_t = { _, ok, ud in
        PulseRequest.from(ud).finish(success: ok != 0)
    }

    // MARK: Blocking calls (any thread but the mainloop's)

    /// Every sink (`pa_context_get_sink_info_list`).
    func sinks() throws -> [SinkSnapshot] {
        try perform("listing the outputs") { pa_context_get_sink_info_list($0, Self.sinkCallback, $1) }.sinks
    }

    /// The sink named `name` (`@DEFAULT_SINK@` for the default one), or nil when there is none.
    func sink(named name: String) throws -> SinkSnapshot? {
        do {
            return try perform("reading the output '\(name)'") { pa_context_get_sink_info_by_name($0, name, Self.sinkCallback, $1) }.sinks.first
        } catch let e as TonearmError {
            // The server answers an unknown name with an error: tell it from a lost connection.
            if isConnected { return nil }
            throw e
        }
    }

    /// The default sink's name (`pa_context_get_server_info`); nil when the server has none.
    func defaultSinkName() throws -> String? {
        try perform("asking the server for its default output") { pa_context_get_server_info($0, Self.serverCallback, $1) }.defaultSinkName
    }

    /// Every source (`pa_context_get_source_info_list`), monitors included, each monitor naming
    /// its sink.
    func sources() throws -> [SourceSnapshot] {
        let names = Dictionary(try sinks().map { ($0.index, $0.name) }, uniquingKeysWith: { a, _ in a })
        let r = PulseRequest(control: self)
        r.sinkNames = names
        return try perform("listing the inputs", request: r) { pa_context_get_source_info_list($0, Self.sourceCallback, $1) }.sources
    }

    /// The source named `name` (`@DEFAULT_SOURCE@` for the default one), or nil when there is none.
    func source(named name: String) throws -> SourceSnapshot? {
        do {
            return try perform("reading the input '\(name)'") { pa_context_get_source_info_by_name($0, name, Self.sourceCallback, $1) }.sources.first
        } catch let e as TonearmError {
            if isConnected { return nil }
            throw e
        }
    }

    /// Sets the volume of the source `name`.
    func setSourceVolume(_ name: String, _ volume: pa_cvolume) throws {
        var v = volume
        _ = try perform("setting the gain of '\(name)'") { pa_context_set_source_volume_by_name($0, name, &v, Self.successCallback, $1) }
    }

    /// Mutes or unmutes the source `name`.
    func setSourceMute(_ name: String, _ muted: Bool) throws {
        _ = try perform("\(muted ? "muting" : "unmuting") '\(name)'") {
            pa_context_set_source_mute_by_name($0, name, muted ? 1 : 0, Self.successCallback, $1)
        }
    }

    /// The default source's name (`pa_context_get_server_info`); nil when the server has none.
    func defaultSourceName() throws -> String? {
        try perform("asking the server for its default input") { pa_context_get_server_info($0, Self.serverCallback, $1) }.defaultSourceName
    }

    /// Makes `name` the default source.
    func setDefaultSource(_ name: String) throws {
        _ = try perform("making '\(name)' the default input") { pa_context_set_default_source($0, name, Self.successCallback, $1) }
    }

    /// Every playback stream (`pa_context_get_sink_input_info_list`).
    func sinkInputs() throws -> [SinkInputSnapshot] {
        try perform("listing the playback streams") { pa_context_get_sink_input_info_list($0, Self.inputCallback, $1) }.inputs
    }

    /// Makes `name` the default sink.
    func setDefaultSink(_ name: String) throws {
        _ = try perform("making '\(name)' the default output") { pa_context_set_default_sink($0, name, Self.successCallback, $1) }
    }

    /// Moves the sink input `input` to the sink with index `sink` (it keeps playing).
    func moveSinkInput(_ input: UInt32, toSink sink: UInt32) throws {
        _ = try perform("moving stream #\(input) to output #\(sink)") {
            pa_context_move_sink_input_by_index($0, input, sink, Self.successCallback, $1)
        }
    }

    /// Sets the volume of the sink `name`.
    func setSinkVolume(_ name: String, _ volume: pa_cvolume) throws {
        var v = volume
        _ = try perform("setting the volume of '\(name)'") { pa_context_set_sink_volume_by_name($0, name, &v, Self.successCallback, $1) }
    }

    /// Mutes or unmutes the sink `name`.
    func setSinkMute(_ name: String, _ muted: Bool) throws {
        _ = try perform("\(muted ? "muting" : "unmuting") '\(name)'") {
            pa_context_set_sink_mute_by_name($0, name, muted ? 1 : 0, Self.successCallback, $1)
        }
    }

    /// Subscribes to the events in `mask`; they arrive at ``onEvent`` (set it first).
    func subscribe(_ mask: pa_subscription_mask_t) throws {
        _ = try perform("subscribing to server events") { pa_context_subscribe($0, mask, Self.successCallback, $1) }
    }

    // MARK: Non-blocking calls (mainloop thread, from event handlers)

    /// Asks for the sink with index `index`; `completion` gets it (nil when it is gone).
    func requestSink(index: UInt32, completion: @escaping (SinkSnapshot?) -> Void) {
        request("reading output #\(index)", completion: { completion($0.sinks.first) }) {
            pa_context_get_sink_info_by_index($0, index, Self.sinkCallback, $1)
        }
    }

    /// Asks for the sink named `name` (`@DEFAULT_SINK@` allowed); `completion` gets it (nil when there is none).
    func requestSink(named name: String, completion: @escaping (SinkSnapshot?) -> Void) {
        request("reading output \(name)", completion: { completion($0.sinks.first) }) {
            pa_context_get_sink_info_by_name($0, name, Self.sinkCallback, $1)
        }
    }

    /// Asks for the default sink's name.
    func requestDefaultSinkName(completion: @escaping (String?) -> Void) {
        request("asking for the default output", completion: { completion($0.defaultSinkName) }) {
            pa_context_get_server_info($0, Self.serverCallback, $1)
        }
    }

    // MARK: State and teardown

    /// Disconnects and frees the main loop. Idempotent. From the mainloop thread (an event
    /// handler), the teardown runs on a dispatch queue.
    func close() { teardown() }

    /// Forgets the handlers and the requests in flight, then closes the connection (whose
    /// disconnection cancels the requests: no callback reaches them after). A close from the
    /// mainloop thread keeps this control alive until its teardown has run.
    private func teardown() {
        connection.close { [self] in
            onFailure = nil
            pending.removeAll()
        }
    }

    // MARK: Helpers

    /// A proplist as a dictionary (string values only).
    static func dictionary(_ list: OpaquePointer?) -> [String: String] { pulseProperties(list) }

    /// The channel volumes of `v`.
    /// The channel volumes whose average is `level` (0...1 of `PA_VOLUME_NORM`, clamped) with
    /// the balance between `values` kept — every channel scaled by the same factor, none above
    /// `PA_VOLUME_MAX` — or all equal when they were equal or silent (`channels` of them when
    /// there were none). A sink's volume and a source's gain are set this way.
    static func volumes(_ values: [UInt32], scaledTo level: Float, channels: Int) -> [UInt32] {
        let wanted = Double(min(max(level, 0), 1)) * Double(tonearm_pa_volume_norm())
        let average = values.isEmpty ? 0 : Double(values.reduce(0) { $0 + UInt64($1) }) / Double(values.count)
        if average > 0, Set(values).count > 1 {
            return values.map { UInt32(min((Double($0) * wanted / average).rounded(), Double(UInt32(Int32.max) / 2))) }
        }
        return [UInt32](repeating: UInt32(wanted.rounded()), count: max(values.count, channels, 1))
    }

    static func volumes(_ v: pa_cvolume) -> [UInt32] {
        var v = v
        let n = Int(min(v.channels, UInt8(PA_CHANNELS_MAX)))
        return withUnsafeBytes(of: &v.values) { raw in Array(raw.bindMemory(to: UInt32.self).prefix(n)) }
    }

    /// A `pa_cvolume` with the given channel volumes.
    static func cvolume(_ values: [UInt32]) -> pa_cvolume {
        var v = pa_cvolume()
        v.channels = UInt8(min(values.count, Int(PA_CHANNELS_MAX)))
        withUnsafeMutableBytes(of: &v.values) { raw in
            let p = raw.bindMemory(to: UInt32.self)
            for (i, x) in values.prefix(Int(PA_CHANNELS_MAX)).enumerated() { p[i] = x }
        }
        return v
    }
}
