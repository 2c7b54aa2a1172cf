// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// What the page asks the daemon to do (`POST /api/command` with `{"command": NAME, "value": V}`):
/// each is one MPD command line, carried out by the daemon's one command layer
/// (``MPDDaemon/execute(_:client:completion:)``) exactly as an MPD client's would be.
public enum WebCommand: Sendable, Hashable {
    case play, pause, stop, next, previous
    /// Seconds into the current song.
    case seek(Double)
    /// 0…100.
    case volume(Int)
    case `repeat`(Bool)
    case random(Bool)
    /// Plays the queue entry with this id.
    case playID(Int)
    /// Removes the queue entry with this id.
    case deleteID(Int)

    /// The MPD command line.
    public var mpdLine: String {
        switch self {
        case .play: "play"
        case .pause: "pause 1"
        case .stop: "stop"
        case .next: "next"
        case .previous: "previous"
        case .seek(let s): "seekcur " + String(format: "%.3f", s)
        case .volume(let v): "setvol \(v)"
        case .repeat(let on): "repeat \(on ? 1 : 0)"
        case .random(let on): "random \(on ? 1 : 0)"
        case .playID(let id): "playid \(id)"
        case .deleteID(let id): "deleteid \(id)"
        }
    }

    public static let names = ["play", "pause", "stop", "next", "previous", "seek", "volume", "repeat", "random", "playid", "deleteid"]

    /// Reads a request body.
    /// - Throws: ``WebRequestError`` naming what is wrong: not JSON, no `command`, an unknown
    ///   one, a missing or out-of-range `value`.
    public init(json body: [UInt8]) throws(WebRequestError) {
        let request: WebCommandBody
        do { request = try JSONDecoder().decode(WebCommandBody.self, from: Data(body)) } catch let DecodingError.typeMismatch(_, context) {
            throw WebRequestError("\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type (expected {\"command\": NAME, \"value\": …})")
        } catch DecodingError.keyNotFound {
            throw WebRequestError("\"command\" is missing (expected {\"command\": NAME, \"value\": …})")
        } catch {
            throw WebRequestError("the body is not a JSON object (expected {\"command\": NAME, \"value\": …})")
        }
        let name = request.command
        let value = request.value
        func number() throws(WebRequestError) -> Double {
            guard case .number(let d)? = value, d.isFinite else { throw WebRequestError("\"\(name)\" needs a number \"value\"") }
            return d
        }
        func integer(_ range: ClosedRange<Int>) throws(WebRequestError) -> Int {
            let d = try number()
            guard d == d.rounded(), d >= Double(range.lowerBound), d <= Double(range.upperBound) else {
                throw WebRequestError("\"\(name)\": \"value\" \(d) is not a whole number in \(range.lowerBound)…\(range.upperBound)")
            }
            return Int(d)
        }
        func flag() throws(WebRequestError) -> Bool {
            guard case .flag(let b)? = value else { throw WebRequestError("\"\(name)\" needs a true or false \"value\"") }
            return b
        }
        switch name {
        case "play": self = .play
        case "pause": self = .pause
        case "stop": self = .stop
        case "next": self = .next
        case "previous": self = .previous
        case "seek":
            let s = try number()
            guard s >= 0 else { throw WebRequestError("\"seek\": \"value\" \(s) is negative") }
            self = .seek(s)
        case "volume": self = .volume(try integer(0...100))
        case "repeat": self = .repeat(try flag())
        case "random": self = .random(try flag())
        case "playid": self = .playID(try integer(0...Int(Int32.max)))
        case "deleteid": self = .deleteID(try integer(0...Int(Int32.max)))
        default:
            throw WebRequestError("unknown command \"\(name)\" (known: \(Self.names.joined(separator: ", ")))")
        }
    }
}

/// The body of `POST /api/command`.
struct WebCommandBody: Decodable {
    var command: String
    var value: Value?

    enum Value: Decodable {
        case number(Double), flag(Bool), other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let b = try? c.decode(Bool.self) {
                self = .flag(b)
            } else if let d = try? c.decode(Double.self) {
                self = .number(d)
            } else {
                self = .other
            }
        }
    }
}

/// A request the web API cannot carry out, and why (sent back as `{"error": …}`, status 400).
public struct WebRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}
