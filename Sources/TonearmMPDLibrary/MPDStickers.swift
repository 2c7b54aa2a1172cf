// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmCore
import TonearmLibrary
import TonearmMPDProtocol

/// MPD's `sticker` command (0.23: the `song` domain; `get`, `set`, `delete`, `list`, `find`
/// with `=`, `<`, `>`) over the library's own columns, so that a rating given from an MPD
/// client, the web remote, `tonearm library rate` or the desktop is one rating, and the play
/// counts the players keep are readable by any MPD client:
///
/// | sticker      | library column   | set by                                         |
/// |--------------|------------------|------------------------------------------------|
/// | `rating`     | rating, 1…5      | `sticker set song URI rating N` (0 deletes it) |
/// | `playCount`  | play count       | the players (read-only)                        |
/// | `skipCount`  | skip count       | the players (read-only)                        |
/// | `lastPlayed` | last played date | the players (read-only; seconds since 1970)    |
///
/// A sticker "exists" when its column has a value (a rating above 0, a count above 0, a date).
/// Differences from MPD, which stores any name with any value: a rating is a whole number of
/// stars from 0 to 5, and other names are refused (`ACK [2@0]`) — the library keeps no free-form
/// stickers. Stickers follow a song through moves and renames (they belong to the library's item,
/// not to its URI, as MPD's do). Values compare as text in `find … < V`, as MPD 0.23 compares
/// them.
extension MPDLibraryResponder {
    /// The stickers the library has, in the order `sticker list` prints them.
    public static let stickerNames = ["lastPlayed", "playCount", "rating", "skipCount"]

    /// The value of sticker `name` in `usage`, nil when it has none.
    static func stickerValue(_ name: String, _ usage: ItemUsage) -> String? {
        switch name {
        case "rating": usage.rating > 0 ? String(usage.rating) : nil
        case "playCount": usage.playCount > 0 ? String(usage.playCount) : nil
        case "skipCount": usage.skipCount > 0 ? String(usage.skipCount) : nil
        case "lastPlayed": usage.lastPlayedDate.map { String(Int64($0.timeIntervalSince1970.rounded(.down))) }
        default: nil
        }
    }

    /// `sticker ARGS…` (its arguments counted already: at least 3): the answer without `OK`.
    /// A `set` or `delete` that does not throw changed a sticker, as MPD counts it (the daemon
    /// reports the `sticker` idle event).
    /// - Throws: MPD's ACKs (`unknown sticker domain`, `bad request`, `No such song`,
    ///   `no such sticker`, `bad operator`) and ours for a value the library cannot hold.
    public func sticker(arguments a: [String]) throws(MPDAck) -> String {
        let command = "sticker"
        guard a.count >= 3 else { throw MPDAck(.argument, "too few arguments for \"sticker\"", command: command) }
        guard a[1] == "song" else { throw MPDAck(.argument, "unknown sticker domain", command: command) }
        let sub = a[0]
        func usage(ofSong uri: String) throws(MPDAck) -> ItemUsage { try stickerUsage(ofSong: uri) }
        func setRating(_ stars: Int, _ u: ItemUsage) throws(MPDAck) {
            do { try library.setRating(stars, of: u.persistentID) } catch { throw MPDAck(.system, "\(error)", command: command) }
        }
        switch (sub, a.count) {
        case ("get", 4):
            let u = try usage(ofSong: a[2])
            guard let value = Self.stickerValue(a[3], u) else { throw MPDAck(.noExist, "no such sticker", command: command) }
            return MPDResponse.pair("sticker", "\(a[3])=\(value)")
        case ("list", 3):
            let u = try usage(ofSong: a[2])
            var out = ""
            for name in Self.stickerNames { if let v = Self.stickerValue(name, u) { out += MPDResponse.pair("sticker", "\(name)=\(v)") } }
            return out
        case ("set", 5):
            let u = try usage(ofSong: a[2])
            switch a[3] {
            case "rating":
                guard let stars = Int(a[4]), (0...5).contains(stars), a[4].allSatisfy(\.isASCII) else {
                    throw MPDAck(.argument, "a rating is a whole number of stars, 0 to 5, not \"\(a[4].prefix(40))\"", command: command)
                }
                try setRating(stars, u)
                return ""
            case "playCount", "skipCount", "lastPlayed":
                throw MPDAck(.argument, "\(a[3]) is kept by the player and cannot be set", command: command)
            default:
                throw MPDAck(.argument, "the library keeps no sticker \"\(a[3].prefix(40))\" (only rating can be set)", command: command)
            }
        case ("delete", 3), ("delete", 4):
            let u = try usage(ofSong: a[2])
            if a.count == 4, a[3] != "rating" {
                if Self.stickerValue(a[3], u) == nil { throw MPDAck(.noExist, "no such sticker", command: command) }
                throw MPDAck(.argument, "\(a[3]) is kept by the player and cannot be deleted", command: command)
            }
            guard u.rating > 0 else { throw MPDAck(.noExist, "no such sticker", command: command) }
            try setRating(0, u)
            return ""
        case ("find", 4), ("find", 6):
            enum Comparison { case exists, equal(String), less(String), greater(String) }
            var comparison = Comparison.exists
            if a.count == 6 {
                switch a[4] {
                case "=": comparison = .equal(a[5])
                case "<": comparison = .less(a[5])
                case ">": comparison = .greater(a[5])
                default: throw MPDAck(.argument, "bad operator", command: command)
                }
            }
            // As MPD: the songs under the folder `base` ("" for all); a song's URI names no folder.
            let base = a[2]
            guard base.isEmpty || filePath(forURI: base) == nil, let uris = try? songURIs(under: base, command: command) else {
                return ""
            }
            let paths = uris.map { folders.path(forURI: $0) }
            let usages: [String: ItemUsage]
            do { usages = try library.usage(forPaths: paths) } catch { throw MPDAck(.system, "\(error)", command: command) }
            var out = ""
            for (uri, path) in zip(uris, paths) {
                guard let u = usages[path], let value = Self.stickerValue(a[3], u) else { continue }
                let keep = switch comparison {
                case .exists: true
                case .equal(let v): value == v
                // SQLite's comparison of text: byte order.
                case .less(let v): Array(value.utf8).lexicographicallyPrecedes(Array(v.utf8))
                case .greater(let v): Array(v.utf8).lexicographicallyPrecedes(Array(value.utf8))
                }
                if keep { out += MPDResponse.pair("file", uri) + MPDResponse.pair("sticker", "\(a[3])=\(value)") }
            }
            return out
        default:
            throw MPDAck(.argument, "bad request", command: command)
        }
    }

    /// The usage of the song at `uri`.
    /// - Throws: `ACK [50@0] {sticker} No such song` when the database has no song there.
    private func stickerUsage(ofSong uri: String) throws(MPDAck) -> ItemUsage {
        let command = "sticker"
        guard let path = filePath(forURI: uri) else { throw MPDAck(.noExist, "No such song", command: command) }
        let all: [String: ItemUsage]
        do { all = try library.usage(forPaths: [path]) } catch { throw MPDAck(.system, "\(error)", command: command) }
        guard let found = all[path] else { throw MPDAck(.noExist, "No such song", command: command) }
        return found
    }
}
