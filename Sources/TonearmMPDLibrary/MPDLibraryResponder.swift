// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import Synchronization
import TonearmCore
import TonearmLibrary
import TonearmMPDProtocol

/// The database half of the MPD protocol over a ``MediaLibrary``: `lsinfo`, `listall`,
/// `listallinfo`, `find`, `search`, `list`, `count`, the database lines of `stats` and the stored
/// playlists (the library's own), answered as MPD 0.23 answers them (compared with a real MPD on
/// the same music folder by `MPDLibraryPeerTests`). No networking: the daemon's server hands it
/// a command and sends what it returns.
///
/// URIs are paths relative to the music folder, as MPD has them; songs the library holds outside
/// that folder are not part of the database. The library is read into memory (as MPD holds its
/// database) by `init` and by ``reload()``, which the daemon calls after a scan.
///
/// Threading: Sendable; every method may be called from any thread (the snapshot is swapped under
/// a lock, answers are made from an immutable one).
public final class MPDLibraryResponder: Sendable {
    public let library: MediaLibrary
    /// The music folder, absolute, standardized, without a final slash.
    public var musicRoot: String { folders.root }
    /// The music folder and the folders shown as its top-level folders.
    public let folders: MPDFolders
    private let snapshot: Mutex<MPDSnapshot>

    /// Reads `library`'s songs under `musicRoot` and, each as a top-level folder of the
    /// database named as the folder (``MPDFolders``), under `otherFolders`.
    /// - Throws: ``MPDAck`` `.system` when the library cannot be read.
    public init(library: MediaLibrary, musicRoot: String, otherFolders: [String] = []) throws(MPDAck) {
        self.library = library
        folders = MPDFolders(root: musicRoot, others: otherFolders)
        snapshot = Mutex(try MPDSnapshot.load(library: library, folders: folders))
    }

    /// Reads the library again (after a scan or a change of its files).
    public func reload() throws(MPDAck) {
        let fresh = try MPDSnapshot.load(library: library, folders: folders)
        snapshot.withLock { $0 = fresh }
    }

    private var current: MPDSnapshot { snapshot.withLock { $0 } }

    /// The commands ``respond(command:arguments:)`` answers.
    public static let commands: Set<String> = [
        "lsinfo", "listall", "listallinfo", "listfiles", "find", "search", "list", "count",
        "listplaylists", "listplaylist", "listplaylistinfo",
        "rm", "rename", "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "searchaddpl", "sticker",
    ]

    /// Of ``commands``, those that change the stored playlists (the daemon then reports the
    /// `stored_playlist` idle event).
    public static let playlistChangingCommands: Set<String> = [
        "rm", "rename", "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "searchaddpl",
    ]

    /// The answer to `command` (its arguments counted already by `MPDCommands.check`), without
    /// the final `OK\n`.
    /// - Throws: the ``MPDAck`` MPD would send (its `command` set, index 0).
    ///
    /// `tagTypes`: the tags the connection's `tagtypes` leaves on (nil: all): songs are printed
    /// with those only.
    public func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>? = nil) throws(MPDAck) -> String {
        let db = current
        switch command {
        case "lsinfo": return try lsinfo(db, arguments.first ?? "", tagTypes)
        case "listall": return try listAll(db, arguments.first ?? "", info: false, command: command, tagTypes)
        case "listallinfo": return try listAll(db, arguments.first ?? "", info: true, command: command, tagTypes)
        case "listfiles": return try listFiles(arguments.first ?? "")
        case "find", "search": return try find(db, arguments, foldCase: command == "search", command: command, tagTypes)
        case "list": return try list(db, arguments)
        case "count": return try count(db, arguments)
        case "listplaylists": return try listPlaylists()
        case "listplaylist", "listplaylistinfo":
            return try listPlaylist(db, arguments.first ?? "", info: command == "listplaylistinfo", command: command, tagTypes)
        case "rm", "rename", "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "searchaddpl":
            try editPlaylist(db, command: command, arguments)
            return ""
        case "sticker": return try sticker(arguments: arguments)
        default: throw MPDAck(.unknown, "unknown command \"\(command)\"")
        }
    }

    /// The database lines of `stats` (`artists`, `albums`, `songs`, `db_playtime`, `db_update`),
    /// to follow `uptime` and `playtime`.
    public func databaseStats() -> String {
        let db = current
        var artists = Set<String>(), albums = Set<String>()
        var ms: Int64 = 0
        for s in db.songs {
            artists.formUnion(s.values(.artist))
            albums.formUnion(s.values(.album))
            ms += s.milliseconds
        }
        // MPD adds the songs' milliseconds and cuts the sum to seconds.
        return "artists: \(artists.count)\nalbums: \(albums.count)\nsongs: \(db.songs.count)\n"
            + "db_playtime: \(ms / 1000)\ndb_update: \(db.updated)\n"
    }

    /// The URIs of the songs `filter` matches, in database order (`findadd`; `searchadd` with
    /// `foldCase`).
    public func songURIs(matching filter: MPDFilter, foldCase: Bool = false) throws(MPDAck) -> [String] {
        let db = current
        let m = try MPDSongMatcher(filter, foldCase: foldCase, command: foldCase ? "searchadd" : "findadd")
        return db.order.compactMap { m.matches(db.songs[$0]) ? db.songs[$0].uri : nil }
    }

    /// The URIs of the songs `findadd`'s or `searchadd`'s arguments select (`command` says
    /// which: `search…` and `playlistsearch` ignore case), `sort` and `window` included, in the order they are added.
    public func songURIs(filterArguments arguments: [String], command: String) throws(MPDAck) -> [String] {
        let db = current
        let foldCase = command.hasPrefix("search") || command == "playlistsearch"
        return try findIndexes(db, arguments, foldCase: foldCase, command: command).0.map { db.songs[$0].uri }
    }

    /// The URIs of the songs at or under `uri` (a song, or a folder: `add DIR`), in database
    /// order. - Throws: `ACK [50@0] {add} No such directory` when it names neither.
    public func songURIs(under uri: String, command: String = "add") throws(MPDAck) -> [String] {
        let db = current
        guard let u = Self.normalized(uri) else { throw MPDAck(.noExist, "No such directory", command: command) }
        if let i = db.byURI[u] { return [db.songs[i].uri] }
        guard db.directories[u] != nil else { throw MPDAck(.noExist, "No such directory", command: command) }
        return walk(db, u).map { db.songs[$0].uri }
    }

    /// The file of the song at `uri` in the library, or nil (not a song of the database, or a
    /// URI that leaves the music folder).
    public func filePath(forURI uri: String) -> String? {
        let db = current
        guard let u = Self.normalized(uri), !u.isEmpty, let i = db.byURI[u] else { return nil }
        return db.songs[i].path
    }

    /// The library's persistentID of the database's song whose file is `path`, or nil (not a
    /// song of the music folders). From the snapshot: no query.
    public func persistentID(forFilePath path: String) -> UInt64? {
        let db = current
        guard let uri = folders.uri(forPath: path), let i = db.byURI[uri] else { return nil }
        return db.songs[i].persistentID
    }

    /// The URI of the file at `path` when it lies in the music folder or another of the
    /// folders (not necessarily in the library), else nil.
    public func uri(forFilePath path: String) -> String? { folders.uri(forPath: path) }

    /// `uri` as a key of the database: "" for the top ("" or "/"); nil for a URI MPD finds
    /// nothing at — one that starts or ends with a slash, has an empty, `.` or `..` part (MPD's
    /// `uri_safe_local`: nothing leaves the music folder).
    static func normalized(_ uri: String) -> String? {
        if uri.isEmpty || uri == "/" { return "" }
        for part in uri.split(separator: "/", omittingEmptySubsequences: false) {
            if part.isEmpty || part == "." || part == ".." { return nil }
        }
        return uri
    }

    // MARK: Pictures

    /// A binary answer of `albumart` or `readpicture`: its lines (`size: …`, `type: …`,
    /// `binary: N`) and the chunk of the picture they announce.
    public struct BinaryResponse: Sendable, Hashable {
        /// The lines before the data; empty when there is no picture (`readpicture` of a song
        /// without one answers just `OK`).
        public var header: String
        public var data: [UInt8]

        /// The answer as sent, without the final `OK\n`: the header, the data and the newline
        /// that ends it.
        public var bytes: [UInt8] { header.isEmpty ? [] : Array(header.utf8) + data + [10] }
    }

    /// The commands ``picture(command:arguments:binaryLimit:)`` answers.
    public static let pictureCommands: Set<String> = ["albumart", "readpicture"]

    /// `albumart URI OFFSET` (the first of `cover.png`, `cover.jpg`, `cover.tiff`, `cover.bmp`
    /// in the song's folder, as MPD looks for them) or `readpicture URI OFFSET` (the picture the
    /// library found in the file's tags): at most `binaryLimit` bytes from `OFFSET` (the
    /// connection's `binarylimit`, 8192 unless the client set another).
    /// - Throws: MPD's ACKs: "No file exists" (albumart), "No such song" (readpicture),
    ///   "Offset too large" / "Bad file offset", "Integer expected: …".
    public func picture(command: String, arguments: [String], binaryLimit: Int = 8192) throws(MPDAck) -> BinaryResponse {
        guard arguments.count == 2 else { throw MPDAck(.argument, "wrong number of arguments for \"\(command)\"", command: command) }
        let offset: Int
        do { offset = Int(try MPDArguments.unsigned(arguments[1], max: Int64(Int32.max))) } catch { throw error.ack(command: command) }
        let uri = arguments[0]
        var data: [UInt8]
        var type: String?
        if command == "albumart" {
            guard let u = Self.normalized(uri), !u.isEmpty,
                  let found = Self.coverFile(in: folders.path(forURI: parentURI(u))) else {
                throw MPDAck(.noExist, "No file exists", command: command)
            }
            data = found
            guard offset <= data.count else { throw MPDAck(.argument, "Offset too large", command: command) }
        } else {
            guard let path = filePath(forURI: uri) else { throw MPDAck(.noExist, "No such song", command: command) }
            let artwork: Artwork?
            do {
                artwork = try library.item(atPath: path).flatMap { item throws(TonearmError) in try library.artwork(for: item) }
            } catch {
                throw MPDAck(.system, "\(error)", command: command)
            }
            guard let artwork else { return BinaryResponse(header: "", data: []) }
            data = artwork.data
            type = artwork.mimeType
            guard offset <= data.count else { throw MPDAck(.argument, "Bad file offset", command: command) }
        }
        let chunk = Array(data[offset..<min(data.count, offset + max(1, binaryLimit))])
        var header = "size: \(data.count)\n"
        if let type { header += "type: \(type)\n" }
        header += "binary: \(chunk.count)\n"
        return BinaryResponse(header: header, data: chunk)
    }

    static let coverNames = ["cover.png", "cover.jpg", "cover.tiff", "cover.bmp"]

    static func coverFile(in folder: String) -> [UInt8]? {
        for name in coverNames {
            if let data = FileManager.default.contents(atPath: folder + "/" + name) { return [UInt8](data) }
        }
        return nil
    }

    // MARK: Listing

    /// A song as MPD prints it; `format` false for the songs of a sorted `find` (MPD 0.23 sorts
    /// copies of the songs that have lost their audio format).
    private func songBlock(_ s: MPDSong, format: Bool = true, tags: Set<MPDTag>?) -> String {
        var out = "file: \(s.uri)\nLast-Modified: \(iso8601(s.mtime))\n"
        if format { out += "Format: \(s.format)\n" }
        for (tag, value) in s.tags where tags?.contains(tag) ?? true { out += MPDResponse.pair(tag.rawValue, value) }
        // MPD keeps durations in whole milliseconds, cut (not rounded) from the samples, and
        // rounds those to whole seconds for Time.
        let ms = s.milliseconds
        out += "Time: \((ms + 500) / 1000)\nduration: \(ms / 1000).\(String(1000 + ms % 1000).dropFirst())\n"
        return out
    }

    private func directoryLine(_ d: MPDDirectory, info: Bool) -> String {
        info ? "directory: \(d.uri)\nLast-Modified: \(iso8601(d.mtime))\n" : "directory: \(d.uri)\n"
    }

    private func lsinfo(_ db: MPDSnapshot, _ uri: String, _ tags: Set<MPDTag>?) throws(MPDAck) -> String {
        guard let u = Self.normalized(uri) else { throw MPDAck(.noExist, "No such directory", command: "lsinfo") }
        if let i = db.byURI[u] { return songBlock(db.songs[i], tags: tags) }
        guard let d = db.directories[u] else { throw MPDAck(.noExist, "No such directory", command: "lsinfo") }
        var out = ""
        for i in d.songs { out += songBlock(db.songs[i], tags: tags) }
        for c in d.children { if let child = db.directories[c] { out += directoryLine(child, info: true) } }
        if u.isEmpty { out += try playlistLines() }
        return out
    }

    /// Song indexes at and under the folder, in database order.
    private func walk(_ db: MPDSnapshot, _ uri: String) -> [Int] {
        guard let d = db.directories[uri] else { return [] }
        var out = d.songs
        for c in d.children { out += walk(db, c) }
        return out
    }

    private func listAll(_ db: MPDSnapshot, _ uri: String, info: Bool, command: String, _ tags: Set<MPDTag>?) throws(MPDAck) -> String {
        guard let u = Self.normalized(uri) else { throw MPDAck(.noExist, "No such directory", command: command) }
        if let i = db.byURI[u] { return info ? songBlock(db.songs[i], tags: tags) : "file: \(u)\n" }
        guard let top = db.directories[u] else { throw MPDAck(.noExist, "No such directory", command: command) }
        var out = ""
        func visit(_ d: MPDDirectory) {
            if !d.uri.isEmpty { out += directoryLine(d, info: info) }
            for i in d.songs { out += info ? songBlock(db.songs[i], tags: tags) : "file: \(db.songs[i].uri)\n" }
            for c in d.children { if let child = db.directories[c] { visit(child) } }
        }
        visit(top)
        return out
    }

    /// The folder's entries as the file system has them (readdir's order; files with their
    /// size, folders; symbolic links and other kinds left out, as MPD leaves them out). Unlike
    /// MPD 0.23, which lists `../` (the folder above the music folder), a URI with `..` is refused.
    private func listFiles(_ uri: String) throws(MPDAck) -> String {
        guard let u = Self.normalized(uri) else { throw MPDAck(.argument, "Malformed URI", command: "listfiles") }
        let path = folders.path(forURI: u)
        guard let dir = opendir(path) else {
            throw MPDAck(.system, "Failed to open \(path): \(String(cString: strerror(errno)))", command: "listfiles")
        }
        defer { closedir(dir) }
        var out = ""
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            var st = stat()
            guard lstat(path + "/" + name, &st) == 0 else { continue }
            let modified = "Last-Modified: \(iso8601(Int64(st.st_mtim.tv_sec)))\n"
            switch st.st_mode & S_IFMT {
            case S_IFREG: out += MPDResponse.pair("file", name) + "size: \(st.st_size)\n" + modified
            case S_IFDIR: out += MPDResponse.pair("directory", name) + modified
            default: continue
            }
        }
        return out
    }

    // MARK: find, search

    private func find(_ db: MPDSnapshot, _ arguments: [String], foldCase: Bool, command: String, _ tags: Set<MPDTag>?) throws(MPDAck) -> String {
        let (found, sorted) = try findIndexes(db, arguments, foldCase: foldCase, command: command)
        var out = ""
        for i in found { out += songBlock(db.songs[i], format: !sorted, tags: tags) }
        return out
    }

    /// The songs `find`/`search` arguments (a filter, then `sort TAG` and `window START:END`)
    /// select, in their order; whether a sort was asked for.
    private func findIndexes(_ db: MPDSnapshot, _ arguments: [String], foldCase: Bool, command: String) throws(MPDAck) -> ([Int], Bool) {
        var args = arguments[...]
        var window: Range<Int64>?
        var sortTag: (MPDTag?, descending: Bool)?
        // Trailing `window START:END` and `sort TAG`, as MPD reads them (from the end).
        if args.count >= 2, args[args.endIndex - 2] == "window" {
            do {
                switch try MPDArguments.range(args.last!) {
                case .all: window = nil
                case .span(let start, let end): window = start..<(end ?? Int64.max)
                }
            } catch { throw error.ack(command: command) }
            args = args.dropLast(2)
        }
        if args.count >= 2, args[args.endIndex - 2] == "sort" {
            var name = args.last!
            let descending = name.hasPrefix("-")
            if descending { name.removeFirst() }
            if name == "Last-Modified" {
                sortTag = (nil, descending)
            } else {
                guard let tag = MPDTag(name: name) else { throw MPDAck(.argument, "Unknown sort tag", command: command) }
                sortTag = (tag, descending)
            }
            args = args.dropLast(2)
        }
        let filter: MPDFilter
        do { filter = try MPDFilter.parse(arguments: Array(args), exact: !foldCase) } catch { throw error.ack(command: command) }
        let m = try MPDSongMatcher(filter, foldCase: foldCase, command: command)
        var found = db.order.filter { m.matches(db.songs[$0]) }
        if let (tag, descending) = sortTag {
            func key(_ i: Int) -> String { tag.map { db.songs[i].valuesWithFallback($0).first ?? "" } ?? "" }
            if let _ = tag {
                found = found.enumerated().sorted { a, b in
                    let ka = key(a.element), kb = key(b.element)
                    if ka != kb { return descending ? ka > kb : ka < kb }
                    return a.offset < b.offset
                }.map(\.element)
            } else {
                found = found.enumerated().sorted { a, b in
                    let ma = db.songs[a.element].mtime, mb = db.songs[b.element].mtime
                    if ma != mb { return descending ? ma > mb : ma < mb }
                    return a.offset < b.offset
                }.map(\.element)
            }
        }
        if let window {
            let lo = Int(min(window.lowerBound, Int64(found.count))), hi = Int(min(window.upperBound, Int64(found.count)))
            found = Array(found[lo..<max(lo, hi)])
        }
        return (found, sortTag != nil)
    }

    // MARK: list, count

    /// Reads trailing `group TAG` pairs from the end, as MPD does: the last one given is the
    /// outermost (`list title group album group albumartist` lists album artists, their
    /// albums, their titles).
    private func groups(_ args: inout ArraySlice<String>, command: String) throws(MPDAck) -> [MPDTag] {
        var groups: [MPDTag] = []
        while args.count >= 2, args[args.endIndex - 2] == "group" {
            let name = args.last!
            guard let tag = MPDTag(name: name) else { throw MPDAck(.argument, "Unknown tag type: \(name)", command: command) }
            groups.append(tag)
            args = args.dropLast(2)
        }
        return groups
    }

    private func list(_ db: MPDSnapshot, _ arguments: [String]) throws(MPDAck) -> String {
        let command = "list"
        guard let name = arguments.first else { throw MPDAck(.argument, "too few arguments for \"list\"", command: command) }
        let isFile = name.lowercased() == "file"
        let tag = MPDTag(name: name)
        guard isFile || tag != nil else { throw MPDAck(.argument, "Unknown tag type: \(name)", command: command) }
        var args = arguments.dropFirst()
        let groupTags = try groups(&args, command: command)
        var matcher: MPDSongMatcher?
        if args.count == 1, args.first?.utf8.first != UInt8(ascii: "(") {
            // `list album ARTIST`: the albums of an artist (MPD before 0.21).
            guard tag == .album else { throw MPDAck(.argument, "should be \"Album\" for 3 arguments", command: command) }
            matcher = try MPDSongMatcher(.compare(.tag(.artist), .equal, args.first!), foldCase: false, command: command)
        } else if !args.isEmpty {
            let filter: MPDFilter
            do { filter = try MPDFilter.parse(arguments: Array(args), exact: true) } catch { throw error.ack(command: command) }
            matcher = try MPDSongMatcher(filter, foldCase: false, command: command)
        }
        if isFile, groupTags.isEmpty {
            // MPD lists files in database order.
            var out = ""
            for i in db.order where matcher?.matches(db.songs[i]) ?? true { out += "file: \(db.songs[i].uri)\n" }
            return out
        }
        // Every distinct (group values…, value), in byte order, printed with a group's line
        // only where it changes.
        // A row is its values joined by NUL (which no tag holds): sorted as bytes, that is the
        // rows' order value by value.
        var rows = Set<String>()
        for i in db.order {
            let s = db.songs[i]
            if let matcher, !matcher.matches(s) { continue }
            var combos: [[String]] = [[]]
            for g in groupTags {
                let vs = s.valuesWithFallback(g)
                let values = vs.isEmpty ? [""] : vs
                combos = combos.flatMap { c in values.map { c + [$0] } }
            }
            let own: [String]
            if isFile { own = [s.uri] } else {
                let vs = s.valuesWithFallback(tag!)
                own = vs.isEmpty ? [""] : vs
            }
            for c in combos {
                let prefix = c.isEmpty ? "" : c.joined(separator: "\0") + "\0"
                for v in own { rows.insert(prefix + v) }
            }
        }
        let names = groupTags.map(\.rawValue) + [isFile ? "file" : tag!.rawValue]
        return Self.printRows(rows, names: names)
    }

    static func printRows(_ rows: Set<String>, names: [String]) -> String {
        let sorted = rows.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var out = ""
        var previous: [Substring]?
        for joined in sorted {
            let row = joined.split(separator: "\0", omittingEmptySubsequences: false)
            var changed = previous == nil
            for (k, v) in row.enumerated() {
                if k == row.count - 1 || changed || previous![k] != v {
                    changed = true
                    out += MPDResponse.pair(names[k], String(v))
                }
            }
            previous = row
        }
        return out
    }

    private func count(_ db: MPDSnapshot, _ arguments: [String]) throws(MPDAck) -> String {
        let command = "count"
        var args = arguments[...]
        var group: MPDTag?
        if args.count >= 2, args[args.endIndex - 2] == "group" {
            let name = args.last!
            guard let tag = MPDTag(name: name) else { throw MPDAck(.argument, "Unknown tag type: \(name)", command: command) }
            group = tag
            args = args.dropLast(2)
        }
        var matcher: MPDSongMatcher?
        if !args.isEmpty {
            let filter: MPDFilter
            do { filter = try MPDFilter.parse(arguments: Array(args), exact: true) } catch { throw error.ack(command: command) }
            matcher = try MPDSongMatcher(filter, foldCase: false, command: command)
        }
        var totals: [String: (Int, Int64)] = [:]
        for i in db.order {
            let s = db.songs[i]
            if let matcher, !matcher.matches(s) { continue }
            let keys: [String]
            if let group {
                let vs = s.valuesWithFallback(group)
                keys = vs.isEmpty ? [""] : vs
            } else {
                keys = [""]
            }
            for k in keys {
                let t = totals[k] ?? (0, 0)
                totals[k] = (t.0 + 1, t.1 + s.milliseconds)
            }
        }
        guard let group else {
            let t = totals[""] ?? (0, 0)
            return "songs: \(t.0)\nplaytime: \(t.1 / 1000)\n"
        }
        var out = ""
        for k in totals.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let t = totals[k]!
            out += MPDResponse.pair(group.rawValue, k) + "songs: \(t.0)\nplaytime: \(t.1 / 1000)\n"
        }
        return out
    }

    // MARK: Stored playlists

    private func playlistLines() throws(MPDAck) -> String {
        let playlists: [MediaPlaylist]
        do { playlists = try library.playlists() } catch { throw MPDAck(.system, "\(error)") }
        var out = ""
        for p in playlists {
            out += MPDResponse.pair("playlist", p.name) + "Last-Modified: \(iso8601(Int64(p.dateModified.timeIntervalSince1970)))\n"
        }
        return out
    }

    private func listPlaylists() throws(MPDAck) -> String { try playlistLines() }

    /// MPD's `spl_valid_name`: not empty, no slash, no line break.
    static func validPlaylistName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains { $0 == "/" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
    }

    /// `rm`, `rename`, `playlistadd`, `playlistclear`, `playlistdelete`, `playlistmove` on the
    /// library's playlists, with MPD's errors.
    private func editPlaylist(_ db: MPDSnapshot, command: String, _ a: [String]) throws(MPDAck) {
        guard let name = a.first else { throw MPDAck(.argument, "too few arguments for \"\(command)\"", command: command) }
        for n in command == "rename" ? Array(a.prefix(2)) : [name] where !Self.validPlaylistName(n) {
            throw MPDAck(.argument, "Bad playlist name", command: command)
        }
        func ack(_ e: TonearmError) -> MPDAck {
            switch e {
            case .playlistNotFound: return MPDAck(.noExist, "No such playlist", command: command)
            case .playlistExists: return MPDAck(.exist, "Playlist exists already", command: command)
            case .invalidArgument: return MPDAck(.argument, command == "playlistmove" ? "Bad range" : "Bad song index", command: command)
            default: return MPDAck(.system, "\(e)", command: command)
            }
        }
        func argument<T>(_ body: () throws(MPDArgumentError) -> T) throws(MPDAck) -> T {
            do { return try body() } catch { throw error.ack(command: command) }
        }
        switch command {
        case "rm":
            do { try library.deletePlaylist(named: name) } catch { throw ack(error) }
        case "rename":
            do { _ = try library.renamePlaylist(name, to: a[1]) } catch { throw ack(error) }
        case "playlistadd", "searchaddpl":
            let uris: [String]
            var position: Int64?
            if command == "searchaddpl" {
                uris = try findIndexes(db, Array(a.dropFirst()), foldCase: true, command: command).0.map { db.songs[$0].uri }
            } else {
                uris = try songURIs(under: a[1], command: command)
                if a.count > 2 { position = try argument { () throws(MPDArgumentError) in try MPDArguments.unsigned(a[2], max: Int64(Int32.max)) } }
            }
            let paths = uris.compactMap { db.byURI[$0].map { db.songs[$0].path } }
            do {
                let ids = try library.persistentIDs(forPaths: paths)
                if try library.playlist(named: name) == nil { _ = try library.createPlaylist(named: name) }
                let before = try library.playlist(named: name)?.count ?? 0
                if let position, position > before { throw MPDAck(.argument, "Bad position", command: command) }
                _ = try library.addItems(paths.compactMap { ids[$0] }, to: name)
                if let position {
                    for k in 0..<(paths.count) { _ = try library.moveItem(from: before + k, to: Int(position) + k, in: name) }
                }
            } catch let e as MPDAck {
                throw e
            } catch let e as TonearmError {
                throw ack(e)
            } catch {
                throw MPDAck(.system, "\(error)", command: command)
            }
        case "playlistclear":
            do throws(TonearmError) {
                guard let p = try library.playlist(named: name) else { throw TonearmError.playlistNotFound(name: name) }
                for index in stride(from: p.count - 1, through: 0, by: -1) { _ = try library.removeItem(at: index, from: name) }
            } catch { throw ack(error) }
        case "playlistdelete":
            let range = try argument { () throws(MPDArgumentError) in try MPDArguments.range(a[1]) }
            do throws(TonearmError) {
                guard let p = try library.playlist(named: name) else { throw TonearmError.playlistNotFound(name: name) }
                let (start, end): (Int, Int)
                switch range {
                case .all: (start, end) = (0, p.count)
                case .span(let s, let e): (start, end) = (Int(s), Int(e ?? Int64(p.count)))
                }
                guard start < p.count, end <= p.count else { throw TonearmError.invalidArgument("range") }
                for index in stride(from: end - 1, through: start, by: -1) { _ = try library.removeItem(at: index, from: name) }
            } catch { throw ack(error) }
        case "playlistmove":
            let from = try argument { () throws(MPDArgumentError) in try MPDArguments.unsigned(a[1], max: Int64(Int32.max)) }
            let to = try argument { () throws(MPDArgumentError) in try MPDArguments.unsigned(a[2], max: Int64(Int32.max)) }
            do { _ = try library.moveItem(from: Int(from), to: Int(to), in: name) } catch { throw ack(error) }
        default: break
        }
    }

    /// The URIs of the stored playlist `name` in its order, as `listplaylist` prints them
    /// (`load`): a song of the music folder by its URI, another file by its path.
    /// - Throws: `ACK [50@0] {load} No such playlist`.
    public func playlistURIs(named name: String, command: String = "load") throws(MPDAck) -> [String] {
        let items = try playlistItems(named: name, command: command)
        return items.map { uri(forFilePath: $0.path) ?? $0.path }
    }

    /// Saves the queue's `uris` as the new stored playlist `name` (`save`, MPD 0.23: no mode;
    /// an existing playlist is an error). URIs of the database and absolute paths of files the
    /// library holds are kept; others (streams, files outside the library) are left out.
    /// - Throws: MPD's `Bad playlist name`, `Playlist already exists`.
    public func savePlaylist(named name: String, uris: [String], command: String = "save") throws(MPDAck) {
        guard Self.validPlaylistName(name) else { throw MPDAck(.argument, "Bad playlist name", command: command) }
        let db = current
        let paths = uris.compactMap { u -> String? in
            if u.hasPrefix("/") { return u }
            return Self.normalized(u).flatMap { db.byURI[$0] }.map { db.songs[$0].path }
        }
        do throws(TonearmError) {
            guard try library.playlist(named: name) == nil else { throw TonearmError.playlistExists(name: name) }
            let ids = try library.persistentIDs(forPaths: paths)
            _ = try library.createPlaylist(named: name)
            _ = try library.addItems(paths.compactMap { ids[$0] }, to: name)
        } catch {
            if case .playlistExists = error { throw MPDAck(.exist, "Playlist already exists", command: command) }
            throw MPDAck(.system, "\(error)", command: command)
        }
    }

    /// The songs of the stored playlist `name`, in order.
    /// - Throws: `ACK [50@0] {command} No such playlist`; a library error as MPD's system error.
    private func playlistItems(named name: String, command: String) throws(MPDAck) -> [MediaItem] {
        do {
            guard try library.playlist(named: name) != nil else { throw MPDAck(.noExist, "No such playlist", command: command) }
            return try library.items(in: name)
        } catch let e as MPDAck {
            throw e
        } catch {
            throw MPDAck(.system, "\(error)", command: command)
        }
    }

    private func listPlaylist(_ db: MPDSnapshot, _ name: String, info: Bool, command: String, _ tags: Set<MPDTag>?) throws(MPDAck) -> String {
        let items = try playlistItems(named: name, command: command)
        var out = ""
        for item in items {
            if let uri = uri(forFilePath: item.path), let i = db.byURI[uri] {
                out += info ? songBlock(db.songs[i], tags: tags) : "file: \(uri)\n"
            } else {
                out += "file: \(item.path)\n"
            }
        }
        return out
    }
}
