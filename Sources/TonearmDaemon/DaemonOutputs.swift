// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import TonearmCore
import TonearmExport
import TonearmRender

/// One output of the daemon as given with `--output` or in `[daemon] outputs`.
public enum DaemonOutput: Sendable, Hashable, CustomStringConvertible {
    case pulse
    case null
    /// A snapserver pipe source's FIFO, in snapserver's `sampleformat` (48000:16:2 unless given).
    case snapcast(path: String, format: SnapcastFormat = .standard)
    /// An HTTP stream on ADDR:PORT, FLAC unless another format is given.
    case http(host: String, port: Int, format: LiveStreamFormat = .flac)

    public static let syntax = "pulse|null|snapcast:FIFO[:RATE:BITS:CHANNELS]|http:ADDR:PORT[:flac|mp3|opus]"

    /// Parses `pulse`, `null`, `snapcast:FIFO[:RATE:BITS:CHANNELS]` or
    /// `http:ADDR:PORT[:flac|mp3|opus]`; throws ``TonearmError/invalidArgument(_:)`` naming what is wrong.
    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let lower = t.lowercased()
        if lower == "pulse" { self = .pulse; return }
        if lower == "null" { self = .null; return }
        if lower.hasPrefix("snapcast:") {
            var path = String(t.dropFirst("snapcast:".count))
            var format = SnapcastFormat.standard
            // A trailing RATE:BITS:CHANNELS (all numbers) is the sample format.
            let parts = path.split(separator: ":", omittingEmptySubsequences: false)
            if parts.count >= 4, parts.suffix(3).allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) {
                let text = parts.suffix(3).joined(separator: ":")
                do { format = try SnapcastFormat(parsing: text) } catch {
                    guard case .invalidArgument(let why) = error else { throw error }
                    throw TonearmError.invalidArgument("output '\(t)': \(why)")
                }
                path = parts.dropLast(3).joined(separator: ":")
            }
            guard !path.isEmpty else { throw TonearmError.invalidArgument("output 'snapcast:' needs the pipe's path, as in snapcast:/tmp/snapfifo") }
            self = .snapcast(path: path, format: format)
            return
        }
        if lower.hasPrefix("http:") {
            var rest = String(t.dropFirst("http:".count))
            var format = LiveStreamFormat.flac
            if let colon = rest.lastIndex(of: ":"), let f = LiveStreamFormat(rawValue: rest[rest.index(after: colon)...].lowercased()) {
                format = f
                rest = String(rest[..<colon])
            } else if let colon = rest.lastIndex(of: ":"), rest[rest.index(after: colon)...].contains(where: \.isLetter) {
                throw TonearmError.invalidArgument("output '\(t)': unknown stream format '\(rest[rest.index(after: colon)...])'; choose flac, mp3 or opus")
            }
            guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port),
                  colon > rest.startIndex else {
                throw TonearmError.invalidArgument("output '\(t)': expected http:ADDR:PORT, as in http:0.0.0.0:8000")
            }
            var host = String(rest[..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self = .http(host: host, port: port, format: format)
            return
        }
        throw TonearmError.invalidArgument("unknown output '\(t)'; choose one of \(Self.syntax)")
    }

    public var description: String {
        switch self {
        case .pulse: "pulse"
        case .null: "null"
        case .snapcast(let p, let f): f == .standard ? "snapcast:\(p)" : "snapcast:\(p):\(f)"
        case .http(let h, let p, let f): f == .flac ? "http:\(h):\(p)" : "http:\(h):\(p):\(f.rawValue)"
        }
    }

    /// How `outputs` lists it.
    var mpd: MPDOutput {
        switch self {
        case .pulse: MPDOutput(name: "PulseAudio", plugin: "pulse")
        case .null: MPDOutput(name: "null", plugin: "null")
        case .snapcast(let p, let f):
            MPDOutput(name: "Snapcast", plugin: "fifo", attributes: ["path=\(p)"] + (f == .standard ? [] : ["format=\(f)"]))
        case .http(let h, let p, let f):
            MPDOutput(name: "HTTP stream", plugin: "httpd", attributes: ["bind_to_address=\(h)", "port=\(p)"] + (f == .flac ? [] : ["encoder=\(f.rawValue)"]))
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
    private let httpByID: [Int: HTTPStreamOutput]

    /// `outputs` in order (at least one). `pulseServer`: the PulseAudio server of a `pulse` output.
    public init(_ outputs: [DaemonOutput], pulseServer: String? = nil, log: @escaping @Sendable (String) -> Void) {
        self.outputs = outputs
        let clockID = outputs.firstIndex { $0 == .pulse || $0 == .null }
        self.clockID = clockID
        clock = clockID.map { outputs[$0] == .pulse ? .pulse(server: pulseServer) : .null } ?? .null
        var taps: [OutputTap?] = []
        var snap: [SnapcastOutput] = []
        var web: [HTTPStreamOutput] = []
        var webByID: [Int: HTTPStreamOutput] = [:]
        for (i, o) in outputs.enumerated() {
            switch o {
            case .snapcast(let path, let format):
                let tap = OutputTap()
                taps.append(tap)
                snap.append(SnapcastOutput(path: path, tap: tap, format: format, log: log))
            case .http(let host, let port, let format):
                let tap = OutputTap()
                taps.append(tap)
                let h = HTTPStreamOutput(host: host, port: port, format: format, tap: tap, log: log)
                web.append(h)
                webByID[i] = h
            default:
                // A second pulse or null output is a tap nobody reads: listed, it stays silent.
                taps.append(i == clockID ? nil : OutputTap())
            }
        }
        self.taps = taps
        snapcast = snap
        http = web
        httpByID = webByID
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
        httpByID[id]?.setEnabled(enabled)
    }

    /// The HTTP streams' title: `text` (`Artist - Title`) for ICY, the tags for Ogg streams.
    public func setTitle(_ text: String, artist: String? = nil, title: String? = nil) {
        for h in http { h.setTitle(HTTPStreamOutput.StreamTitle(text: text, artist: artist, title: title)) }
    }

    /// The Snapcast outputs (for tests and the log: bytes written and dropped).
    public var snapcastOutputs: [SnapcastOutput] { snapcast }
    public var httpOutputs: [HTTPStreamOutput] { http }
}
