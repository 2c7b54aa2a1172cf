// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmRender

/// One output of the daemon as given with `--output` or in `[daemon] outputs`.
public enum DaemonOutput: Sendable, Hashable, CustomStringConvertible {
    case pulse
    case null
    /// A snapserver pipe source's FIFO.
    case snapcast(path: String)
    /// An HTTP stream on ADDR:PORT.
    case http(host: String, port: Int)

    public static let syntax = "pulse|null|snapcast:FIFO|http:ADDR:PORT"

    /// Parses `pulse`, `null`, `snapcast:FIFO` or `http:ADDR:PORT`; throws
    /// ``TonearmError/invalidArgument(_:)`` naming what is wrong.
    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let lower = t.lowercased()
        if lower == "pulse" { self = .pulse; return }
        if lower == "null" { self = .null; return }
        if lower.hasPrefix("snapcast:") {
            let path = String(t.dropFirst("snapcast:".count))
            guard !path.isEmpty else { throw TonearmError.invalidArgument("output 'snapcast:' needs the pipe's path, as in snapcast:/tmp/snapfifo") }
            self = .snapcast(path: path)
            return
        }
        if lower.hasPrefix("http:") {
            let rest = String(t.dropFirst("http:".count))
            guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port),
                  colon > rest.startIndex else {
                throw TonearmError.invalidArgument("output '\(t)': expected http:ADDR:PORT, as in http:0.0.0.0:8000")
            }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self = .http(host: host, port: port)
            return
        }
        throw TonearmError.invalidArgument("unknown output '\(t)'; choose one of \(Self.syntax)")
    }

    public var description: String {
        switch self {
        case .pulse: "pulse"
        case .null: "null"
        case .snapcast(let p): "snapcast:\(p)"
        case .http(let h, let p): "http:\(h):\(p)"
        }
    }

    /// How `outputs` lists it.
    var mpd: MPDOutput {
        switch self {
        case .pulse: MPDOutput(name: "PulseAudio", plugin: "pulse")
        case .null: MPDOutput(name: "null", plugin: "null")
        case .snapcast(let p): MPDOutput(name: "Snapcast", plugin: "fifo", attributes: ["path=\(p)"])
        case .http(let h, let p): MPDOutput(name: "HTTP stream", plugin: "httpd", attributes: ["bind_to_address=\(h)", "port=\(p)"])
        }
    }
}

/// The daemon's outputs: the one whose clock drives playing (PulseAudio or null; the null
/// output, unlisted, when only streams were asked for) and the streams the render thread feeds
/// through an ``OutputHub``, each written by its own thread. Ids are places in ``outputs``.
public final class DaemonOutputs: Sendable {
    public let outputs: [DaemonOutput]
    public let hub: OutputHub
    /// The clock output's selection.
    public let clock: OutputSelection
    /// The clock output's id in ``outputs`` (nil: the unlisted null output).
    let clockID: Int?
    /// Each listed output's tap (nil for the clock).
    private let taps: [OutputTap?]
    private let snapcast: [SnapcastOutput]
    private let http: [HTTPStreamOutput]

    /// `outputs` in order (at least one). `pulseServer`: the PulseAudio server of a `pulse` output.
    public init(_ outputs: [DaemonOutput], pulseServer: String? = nil, log: @escaping @Sendable (String) -> Void) {
        self.outputs = outputs
        let clockID = outputs.firstIndex { $0 == .pulse || $0 == .null }
        self.clockID = clockID
        clock = clockID.map { outputs[$0] == .pulse ? .pulse(server: pulseServer) : .null } ?? .null
        var taps: [OutputTap?] = []
        var snap: [SnapcastOutput] = []
        var web: [HTTPStreamOutput] = []
        for (i, o) in outputs.enumerated() {
            switch o {
            case .snapcast(let path):
                let tap = OutputTap()
                taps.append(tap)
                snap.append(SnapcastOutput(path: path, tap: tap, log: log))
            case .http(let host, let port):
                let tap = OutputTap()
                taps.append(tap)
                web.append(HTTPStreamOutput(host: host, port: port, tap: tap, log: log))
            default:
                // A second pulse or null output is a tap nobody reads: listed, it stays silent.
                taps.append(i == clockID ? nil : OutputTap())
            }
        }
        self.taps = taps
        snapcast = snap
        http = web
        hub = OutputHub(taps: taps.compactMap { $0 })
        for t in taps { t?.isEnabled = true }
    }

    /// How `outputs` lists them.
    public var listed: [MPDOutput] { outputs.map(\.mpd) }

    /// Starts the streams' threads (binds the HTTP ports). Throws when a port cannot be listened on.
    public func start() throws {
        for s in snapcast { try s.start() }
        for h in http { try h.start() }
    }

    public func stop() {
        for s in snapcast { s.stop() }
        for h in http { h.stop() }
    }

    /// `enableoutput`/`disableoutput` of output `id`, live.
    public func setEnabled(_ id: Int, _ enabled: Bool) {
        guard id >= 0, id < outputs.count else { return }
        if id == clockID { hub.isClockEnabled = enabled } else { taps[id]?.isEnabled = enabled }
    }

    /// The HTTP streams' ICY title.
    public func setTitle(_ title: String) {
        for h in http { h.setTitle(title) }
    }

    /// The Snapcast outputs (for tests and the log: bytes written and dropped).
    public var snapcastOutputs: [SnapcastOutput] { snapcast }
    public var httpOutputs: [HTTPStreamOutput] { http }
}
