// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmMPDProtocol

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
    /// Seconds of crossfade between songs (0: none).
    case crossfade(Int)
    /// Plays the queue entry with this id.
    case playID(Int)
    /// Removes the queue entry with this id.
    case deleteID(Int)
    /// Empties the queue.
    case clear
    /// Moves the queue entry with this id to this position.
    case moveID(Int, to: Int)
    /// Saves the queue as a new stored playlist of this name.
    case save(String)
    /// Appends the stored playlist of this name to the queue.
    case load(String)
    /// Adds the library's songs with these ids (``WebLibrary``'s ids, never paths) at the end of
    /// the queue, or after the current song (`next`).
    case add([UInt64], next: Bool)
    /// Turns the output with this id on or off.
    case output(Int, enabled: Bool)
    /// Gives the library's song with this id (``WebLibrary``'s ids) a rating, 0 (none) to 5
    /// stars: its `rating` sticker, which is the library's rating.
    case rate(UInt64, stars: Int)
    /// Sets the player's equalizer preset by name (the outputs' `equalizer` attribute).
    case equalizer(String)
    /// Plays on this output only: it is enabled and every other one disabled (MPD's `mpc
    /// enable only`), one command list.
    case onlyOutput(Int)
    /// The sound device's own volume (PulseAudio's sink), 0–100: not an MPD command.
    case systemVolume(Int)

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
        case .crossfade(let s): "crossfade \(s)"
        case .playID(let id): "playid \(id)"
        case .deleteID(let id): "deleteid \(id)"
        case .clear: "clear"
        case .moveID(let id, let to): "moveid \(id) \(to)"
        case .save(let name): "save " + MPDRequest.quoted(name)
        case .load(let name): "load " + MPDRequest.quoted(name)
        case .output(let id, let on): "\(on ? "enableoutput" : "disableoutput") \(id)"
        // Made by the remote from the songs' URIs (``WebRemote/perform(_:permissions:)``).
        case .add(_, let next): next ? "addid URI +0" : "addid URI"
        case .rate(_, let stars): "sticker set song URI rating \(stars)"
        case .equalizer(let name): "outputset 0 equalizer " + MPDRequest.quoted(name)
        // Made by the remote: a command list from the outputs, and the sound server's volume.
        case .onlyOutput(let id): "enableoutput \(id)"
        case .systemVolume: ""
        }
    }

    public static let names = ["play", "pause", "stop", "next", "previous", "seek", "volume", "repeat", "random", "playid", "deleteid",
                               "crossfade", "clear", "moveid", "save", "load", "add", "playnext", "enableoutput", "disableoutput", "rate", "equalizer", "onlyoutput", "systemvolume"]

    /// A library song id as the API writes it (a decimal number in a string: JavaScript's
    /// numbers cannot hold 64 bits). Anything else — a path, `../`, a URL — is refused: the web
    /// remote names songs by id only.
    public static func libraryID(_ text: String, command: String) throws(WebRequestError) -> UInt64 {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let id = UInt64(text) else {
            throw WebRequestError("\"\(command)\": \"\(text.prefix(80))\" is not a library song id (a decimal number); the web remote takes no file paths")
        }
        return id
    }

    /// A name sent by the page (a playlist's, an artist's, an album's): at most 1,000 bytes, no
    /// control character (a line break would end the MPD command line it goes into).
    public static func checkedName(_ text: String, what: String) throws(WebRequestError) -> String {
        guard text.utf8.count <= 1000, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw WebRequestError("\(what) is longer than 1,000 bytes or holds a control character")
        }
        return text
    }

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
        func text() throws(WebRequestError) -> String {
            guard case .text(let t)? = value else { throw WebRequestError("\"\(name)\" needs a text \"value\"") }
            return t
        }
        func playlistName() throws(WebRequestError) -> String {
            let t = try Self.checkedName(try text(), what: "\"\(name)\": the playlist name")
            guard !t.isEmpty, !t.contains("/") else { throw WebRequestError("\"\(name)\": a playlist name may not be empty or hold \"/\"") }
            return t
        }
        func ids() throws(WebRequestError) -> [UInt64] {
            switch value {
            case .text(let t)?: return [try Self.libraryID(t, command: name)]
            case .list(let items)?:
                guard !items.isEmpty, items.count <= 10_000 else { throw WebRequestError("\"\(name)\" needs 1 to 10,000 song ids") }
                var out: [UInt64] = []
                for item in items {
                    guard case .text(let t) = item else { throw WebRequestError("\"\(name)\": each song id is a string of digits") }
                    out.append(try Self.libraryID(t, command: name))
                }
                return out
            default: throw WebRequestError("\"\(name)\" needs a library song id (a string of digits) or a list of them as \"value\"")
            }
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
        case "crossfade": self = .crossfade(try integer(0...60))
        case "playid": self = .playID(try integer(0...Int(Int32.max)))
        case "deleteid": self = .deleteID(try integer(0...Int(Int32.max)))
        case "clear": self = .clear
        case "moveid":
            guard case .list(let pair)? = value, pair.count == 2, case .number(let id) = pair[0], case .number(let to) = pair[1],
                  id == id.rounded(), to == to.rounded(), id >= 0, to >= 0, id <= Double(Int32.max), to <= Double(Int32.max) else {
                throw WebRequestError("\"moveid\" needs [ID, POSITION] as \"value\" (two whole numbers, 0 or more)")
            }
            self = .moveID(Int(id), to: Int(to))
        case "save": self = .save(try playlistName())
        case "load": self = .load(try playlistName())
        case "add": self = .add(try ids(), next: false)
        case "playnext": self = .add(try ids(), next: true)
        case "enableoutput": self = .output(try integer(0...Int(Int32.max)), enabled: true)
        case "disableoutput": self = .output(try integer(0...Int(Int32.max)), enabled: false)
        case "onlyoutput": self = .onlyOutput(try integer(0...Int(Int32.max)))
        case "systemvolume": self = .systemVolume(try integer(0...100))
        case "equalizer":
            let preset = try Self.checkedName(try text(), what: "\"equalizer\": the preset")
            guard !preset.isEmpty else { throw WebRequestError("\"equalizer\" needs a preset name as \"value\"") }
            self = .equalizer(preset)
        case "rate":
            guard case .list(let pair)? = value, pair.count == 2, case .text(let id) = pair[0], case .number(let stars) = pair[1],
                  stars == stars.rounded(), stars >= 0, stars <= 5 else {
                throw WebRequestError("\"rate\" needs [SONG ID, STARS] as \"value\" (a song id as a string of digits, a whole number of stars from 0 to 5)")
            }
            self = .rate(try Self.libraryID(id, command: name), stars: Int(stars))
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
        case number(Double), flag(Bool), text(String), list([Value]), other

        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let b = try? c.decode(Bool.self) {
                self = .flag(b)
            } else if let d = try? c.decode(Double.self) {
                self = .number(d)
            } else if let t = try? c.decode(String.self) {
                self = .text(t)
            } else if let l = try? c.decode([Value].self) {
                self = .list(l)
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
