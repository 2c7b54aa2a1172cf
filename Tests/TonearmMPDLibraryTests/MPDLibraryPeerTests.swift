// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol
import TonearmTestSupport

/// The database commands against the real peer: one generated music folder (FLAC and MP3 in
/// artist/album folders, CJK names, a song without tags, two albums of one name by different
/// album artists, folders whose names need MPD's collation) is scanned by Tonearm's library and
/// by a real MPD (``PrivateMPD``); the same commands go to both, and the answers must be the
/// same line for line. Only what must differ is normalised: `db_update`, and the order of tag
/// lines inside a song (MPD prints them in the order the file holds them).
@Suite(.serialized) struct MPDLibraryPeerTests {
    /// The folder: (path, seconds, sample rate, channels, extra ffmpeg arguments).
    static let songs: [(String, Double, Int, Int, [String])] = [
        ("Alpha Band/First Album/01 One.flac", 2, 44100, 1,
         meta(title: "One", artist: "Alpha Band", album: "First Album", albumArtist: "Alpha Band", genre: "Rock", date: "2001", track: "1/2", disc: "1")),
        ("Alpha Band/First Album/02 Two.flac", 3, 44100, 2,
         meta(title: "Two", artist: "Alpha Band feat. X", album: "First Album", albumArtist: "Alpha Band", genre: "Rock", date: "2001-05-03", track: "2/2")
            + ["-sample_fmt", "s32"]),
        ("Beta/First Album/01 Uno.mp3", 2, 48000, 1,
         meta(title: "Uno", artist: "Beta", album: "First Album", albumArtist: "Beta", genre: "Pop", date: "1999", track: "1")),
        ("Beta/First Album/b.mp3", 4, 44100, 2,
         meta(title: "bee", artist: "beta", album: "First Album", albumArtist: "Beta", track: "3")),
        ("田中/東京/01 夜.flac", 2, 44100, 1, meta(title: "夜", artist: "田中", album: "東京", genre: "J-Pop")),
        ("loose/untagged.flac", 1, 22050, 1, []),
        ("top.mp3", 1, 44100, 1, meta(title: "Top", artist: "Zed")),
        ("alpha/x.flac", 1, 44100, 1, meta(title: "Ex", artist: "Émile", album: "Lower")),
        ("Émile/y.flac", 1, 44100, 1, meta(title: "Why", artist: "Émile", album: "Accent")),
        ("zeta/z.flac", 1, 44100, 1, meta(title: "Zet", artist: "Zed", album: "Lower", albumArtist: "Zed")),
        ("loose/Same Name.flac", 1, 44100, 2, meta(title: "Same Name", artist: "Zed")),
        ("Émile/v.ogg", 1, 44100, 2, meta(title: "Vorbis", artist: "Émile", album: "Accent", track: "2")),
        // Numbers in order, not as text; a second disc after the first.
        ("zeta/10.flac", 1, 44100, 1, meta(title: "Ten", artist: "Zed", album: "Lower", track: "10")),
        ("zeta/9.flac", 1, 44100, 1, meta(title: "Nine", artist: "Zed", album: "Lower", track: "9")),
        ("zeta/d2.flac", 1, 44100, 1, meta(title: "Disc two", artist: "Zed", album: "Lower", track: "1", disc: "2")),
        ("zeta/d1.flac", 1, 44100, 1, meta(title: "Disc one", artist: "Zed", album: "Lower", track: "5", disc: "1")),
        // Not whole milliseconds: MPD cuts 1.044897… s to 1.044 (and 2.4999… s to Time 2).
        ("zeta/odd.flac", 1.0449, 44100, 1, meta(title: "Odd", artist: "Zed", album: "Lower", track: "7")),
        ("zeta/half.flac", 2.4999, 44100, 1, meta(title: "Half", artist: "Zed", album: "Lower", track: "8")),
    ]

    static func meta(title: String? = nil, artist: String? = nil, album: String? = nil, albumArtist: String? = nil,
                     genre: String? = nil, date: String? = nil, track: String? = nil, disc: String? = nil) -> [String] {
        var out: [String] = []
        for (k, v) in [("title", title), ("artist", artist), ("album", album), ("album_artist", albumArtist),
                       ("genre", genre), ("date", date), ("track", track), ("disc", disc)] {
            if let v { out += ["-metadata", "\(k)=\(v)"] }
        }
        return out
    }

    static func makeMusic(at root: String) throws {
        for (path, seconds, rate, channels, extra) in songs {
            let full = root + "/" + path
            try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=\(seconds)", "-ar", String(rate),
                                    "-ac", String(channels)] + extra + [full])
        }
        try FileManager.default.createDirectory(atPath: root + "/empty", withIntermediateDirectories: true)
        // Pictures: a cover in a folder (albumart), one in a file's tags (readpicture).
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "color=red:s=16x16", "-frames:v", "1", root + "/Beta/First Album/cover.png"])
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "color=blue:s=40x40", "-frames:v", "1", root + "/blue.png"])
        try TagFixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-i", root + "/blue.png", "-map", "0", "-map", "1",
                                "-c:v", "png", "-disposition:v", "attached_pic", "-metadata", "title=Pic", "-metadata", "artist=Zed",
                                root + "/loose/pic.flac"])
        try FileManager.default.removeItem(atPath: root + "/blue.png")
        // Not songs: listed by listfiles only (the link not even there).
        try Data("notes".utf8).write(to: URL(fileURLWithPath: root + "/notes.txt"))
        try Data().write(to: URL(fileURLWithPath: root + "/.hidden"))
        try FileManager.default.createSymbolicLink(atPath: root + "/link.mp3", withDestinationPath: "top.mp3")
    }

    static let commands: [String] = [
        "lsinfo", "lsinfo \"\"", "lsinfo /", "lsinfo \"Beta/First Album\"", "lsinfo \"Beta/First Album/\"", "lsinfo top.mp3",
        "lsinfo nosuch", "lsinfo ../x", "lsinfo empty",
        "listall", "listall Beta", "listall \"loose/untagged.flac\"", "listall nosuch",
        "listallinfo", "listallinfo loose", "listallinfo 田中",
        "listfiles", "listfiles \"Beta/First Album\"", "listfiles empty", "listfiles 田中/東京",
        // find: exact, case kept; tags a song lacks match an empty value; AlbumArtist falls back to Artist.
        "find artist \"Beta\"", "find artist beta", "find albumartist Zed", "find artist \"\"", "find title \"\"",
        "find album \"First Album\" albumartist Beta", "find any Zed", "find file top.mp3", "find base Beta",
        #"find "((album == \"First Album\") AND (artist != \"Beta\"))""#, #"find "(!(artist == \"Beta\"))""#,
        #"find "(album contains \"Album\")""#, #"find "(album contains \"album\")""#, #"find "(title =~ \"^T\")""#,
        #"find "(base \"Alpha Band\")""#, #"find "(AudioFormat == \"44100:16:1\")""#, #"find "(AudioFormat =~ \"*:*:2\")""#,
        #"find "(file == \"top.mp3\")""#, #"find "(modified-since \"2000\")""#, #"find "(albumartist == \"Zed\")""#,
        "find album \"First Album\" sort Title", "find album \"First Album\" sort -Artist", "find album \"First Album\" window 1:3",
        // search: contains, case ignored.
        "search album \"first\"", "search any \"ALPHA\"", "search title \"夜\"", "search artist \"\"", "search artist émile",
        #"search "(artist == \"BETA\")""#, "search file \"B\"",
        // list and count.
        "list album", "list artist", "list albumartist", "list title", "list date", "list track", "list genre", "list file",
        "list album group albumartist", "list title group album group albumartist", "list genre group artist",
        "list artist album \"First Album\"", "list album Beta", #"list artist "(album == \"First Album\")""#,
        #"list album "(artist == \"Zed\")" group date"#,
        "count group artist", "count artist Beta", "count album \"First Album\"",
        #"count "(album == \"First Album\")" group albumartist"#, "count group album", "count artist nobody",
        // Errors.
        "list foo", "find foo x", "search foo x", "find \"(artist = x)\"", #"find "(artist == \"x\""#, "list artist x",
        "list artist group foo", "count group foo", "find artist", "count artist", "find artist x sort foo",
        "find artist x window x", "list Album \"(foo == 'x')\"", #"find "(title =~ \"(\")""#,
    ]

    /// Tonearm's answer to one request line, as MPD would send it.
    static func answer(_ responder: MPDLibraryResponder, _ line: String) -> [String] {
        do {
            let request = try MPDRequest(line: Array(line.utf8))
            _ = try MPDCommands.check(request)
            let body = try responder.respond(command: request.command, arguments: request.arguments)
            return body.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) + ["OK"]
        } catch {
            return [error.line]
        }
    }

    /// The lines with each song's tag lines sorted (MPD prints them in the order the file holds
    /// them), `db_update` left out, and an MP3's `duration` to a tenth of a second: MPD's libmad
    /// decoder counts the encoder's delay and padding (whole frames: 2 s at 48 kHz is 2.040 s),
    /// the library gives the length played, without them (2.000 s).
    static func normalised(_ lines: [String]) -> [String] {
        var out: [String] = []
        var tags: [String] = []
        var inTags = false, mp3 = false
        func flush() {
            out += tags.sorted()
            tags.removeAll()
            inTags = false
        }
        for line in lines {
            if line.hasPrefix("db_update: ") { continue }
            if line.hasPrefix("file: ") {
                flush()
                out.append(line)
                inTags = true
                mp3 = line.hasSuffix(".mp3")
                continue
            }
            if inTags {
                if line.hasPrefix("Last-Modified: ") || line.hasPrefix("Format: ") {
                    out.append(line)
                    continue
                }
                if line.hasPrefix("Time: ") || line.hasPrefix("directory: ") || line.hasPrefix("playlist: ") || line == "OK" {
                    flush()
                } else {
                    tags.append(line)
                    continue
                }
            }
            if mp3, line.hasPrefix("duration: "), let d = Double(line.dropFirst(10)) {
                out.append("duration: ~" + String(format: "%.1f", d))
                continue
            }
            out.append(line)
        }
        flush()
        return out
    }

    /// Commands whose error message is PCRE's in MPD (Swift's `Regex` words them otherwise):
    /// compared to the command's name (`ACK [2@0] {find}`).
    static let messageMayDiffer: Set<String> = [#"find "(title =~ \"(\")""#]

    struct Fixture {
        let mpd: PrivateMPD
        let responder: MPDLibraryResponder
        let library: MediaLibrary
        let dir: TempDir
    }

    static func fixture(stickers: Bool = false) async throws -> Fixture {
        let mpd = try PrivateMPD(stickers: stickers)
        let music = mpd.directory.file("music")
        try makeMusic(at: music)
        let connection = try MPDConnection(socketPath: mpd.socketPath)
        try connection.waitForUpdate()
        let dir = try TempDir("tonearm-mpddb")
        let library = try MediaLibrary(path: dir.file("library.sqlite"))
        try await library.scanToEnd(folders: [music])
        return Fixture(mpd: mpd, responder: try MPDLibraryResponder(library: library, musicRoot: music), library: library, dir: dir)
    }

    @Test func theDatabaseCommandsAnswerAsMPDDoes() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        var differences: [String] = []
        for c in Self.commands {
            var theirs = Self.normalised(try f.mpd.exchange([Array(c.utf8)]))
            var ours = Self.normalised(Self.answer(f.responder, c))
            if Self.messageMayDiffer.contains(c) {
                theirs = theirs.map { $0.prefix { $0 != "}" } + "}" }
                ours = ours.map { $0.prefix { $0 != "}" } + "}" }
            }
            if theirs != ours {
                differences.append("\(c):\n  MPD     \(theirs.joined(separator: " | "))\n  Tonearm \(ours.joined(separator: " | "))")
            }
        }
        #expect(differences.isEmpty, Comment(rawValue: "\(differences.count) of \(Self.commands.count) differ:\n" + differences.joined(separator: "\n")))
        // stats: the database's lines.
        let stats = try f.mpd.exchange([Array("stats".utf8)])
        let theirs = stats.filter { line in ["artists:", "albums:", "songs:", "db_playtime:"].contains { line.hasPrefix($0) } }
        let ours = f.responder.databaseStats().split(separator: "\n").map(String.init).filter { !$0.hasPrefix("db_update:") }
        #expect(theirs == ours)
        #expect(f.responder.databaseStats().contains("db_update: "))
    }

    /// Stored playlists: the same songs put in a playlist of MPD's (`playlistadd`) and of the
    /// library are listed alike.
    @Test func storedPlaylistsAreTheLibrarysListedAsMPDListsItsOwn() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        let uris = ["Beta/First Album/b.mp3", "田中/東京/01 夜.flac", "top.mp3"]
        for u in uris { _ = try f.mpd.exchange([Array("playlistadd Mix \(MPDRequest.quoted(u))".utf8)]) }
        _ = try f.library.createPlaylist(named: "Mix")
        let ids = try f.library.persistentIDs(forPaths: uris.map { f.responder.musicRoot + "/" + $0 })
        _ = try f.library.addItems(uris.map { ids[f.responder.musicRoot + "/" + $0]! }, to: "Mix")
        for c in ["listplaylist Mix", "listplaylistinfo Mix", "listplaylist nosuch", "listplaylistinfo nosuch"] {
            #expect(Self.normalised(try f.mpd.exchange([Array(c.utf8)])) == Self.normalised(Self.answer(f.responder, c)), "\(c)")
        }
        // A playlist's Last-Modified is when each was made: left out (the songs' stay).
        func names(_ lines: [String]) -> [String] {
            var out: [String] = []
            var afterPlaylist = false
            for l in Self.normalised(lines) {
                if afterPlaylist, l.hasPrefix("Last-Modified: ") { afterPlaylist = false; continue }
                afterPlaylist = l.hasPrefix("playlist: ")
                out.append(l)
            }
            return out
        }
        #expect(names(try f.mpd.exchange([Array("listplaylists".utf8)])) == names(Self.answer(f.responder, "listplaylists")))
        // lsinfo at the top lists them after the folders, as MPD does.
        #expect(names(try f.mpd.exchange([Array("lsinfo".utf8)])) == names(Self.answer(f.responder, "lsinfo")))
    }

    /// The commands that change stored playlists, one after the other on both: the same
    /// answers, the same playlists after each.
    @Test func playlistEditsAreMPDs() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        let transcript = [
            "playlistadd P1 top.mp3", "playlistadd P1 \"Beta/First Album\"", "playlistadd P1 nosuch.mp3", "playlistadd P1 ../x",
            "playlistadd P1 \"loose/untagged.flac\" 0", "playlistadd P1 zeta/9.flac 2", "listplaylist P1",
            "playlistadd \"a/b\" top.mp3", "playlistadd \"\" top.mp3", "rename P1 P2", "rename nosuch P3", "playlistadd P3 top.mp3",
            "rename P2 P3", "rename P2 \"x/y\"", "playlistdelete P2 1", "listplaylist P2", "playlistdelete P2 9",
            "playlistdelete nosuch 0", "playlistdelete P2 x", "playlistmove P2 0 2", "listplaylist P2", "playlistmove P2 0 9",
            "playlistmove P2 9 0", "playlistadd P2 zeta", "playlistdelete P2 1:3", "listplaylistinfo P2", "playlistclear P2",
            "listplaylist P2", "playlistclear nosuch",
            "searchaddpl P2 album lower", "searchaddpl P4 \"(artist == 'ZED')\" sort Title", "listplaylist P2", "listplaylist P4",
            "searchaddpl P2 foo x", "listplaylists", "rm P4", "rm P2", "rm nosuch", "rm \"a/b\"", "rm P3", "listplaylists",
        ]
        // listplaylists: without the dates, and by name (MPD lists its playlist folder in
        // readdir's order, which means nothing; the library lists by name).
        func withoutDates(_ lines: [String]) -> [String] {
            guard lines.contains(where: { $0.hasPrefix("playlist: ") }) else { return Self.normalised(lines) }
            return lines.filter { !$0.hasPrefix("Last-Modified: ") }.sorted { a, b in a != "OK" && (b == "OK" || a < b) }
        }
        var differences: [String] = []
        for c in transcript {
            let theirs = withoutDates(try f.mpd.exchange([Array(c.utf8)]))
            let ours = withoutDates(Self.answer(f.responder, c))
            if theirs != ours { differences.append("\(c):\n  MPD     \(theirs)\n  Tonearm \(ours)") }
        }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
    }

    /// `albumart` and `readpicture`, byte for byte, in chunks of the default and of a smaller
    /// `binarylimit`.
    @Test func picturesAreSentAsMPDSendsThem() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        let cases: [(String, Int)] = [
            (#"albumart "Beta/First Album/b.mp3" 0"#, 8192), (#"albumart "Beta/First Album/b.mp3" 10"#, 8192),
            (#"albumart "Beta/First Album/b.mp3" 99999"#, 8192), (#"albumart "loose/pic.flac" 0"#, 8192),
            ("albumart nosuch 0", 8192), (#"albumart "Beta/First Album/b.mp3" x"#, 8192),
            (#"readpicture "loose/pic.flac" 0"#, 8192), (#"readpicture "loose/pic.flac" 5"#, 8192),
            (#"readpicture "loose/pic.flac" 100000"#, 8192), (#"readpicture "Beta/First Album/b.mp3" 0"#, 8192),
            ("readpicture nosuch 0", 8192), (#"readpicture "loose/pic.flac" 64"#, 64), (#"albumart "Beta/First Album/b.mp3" 64"#, 64),
        ]
        var differences: [String] = []
        var chunks = 0
        for (line, limit) in cases {
            let connection = try MPDConnection(socketPath: f.mpd.socketPath)
            if limit != 8192 { _ = try connection.request("binarylimit \(limit)") }
            let theirs = try connection.raw(line)
            if String(decoding: theirs.prefix(40), as: UTF8.self).hasPrefix("size: ") { chunks += 1 }
            var ours: [UInt8]
            do {
                let request = try MPDRequest(line: Array(line.utf8))
                ours = try f.responder.picture(command: request.command, arguments: request.arguments, binaryLimit: limit).bytes + Array("OK\n".utf8)
            } catch {
                ours = Array((error.line + "\n").utf8)
            }
            if theirs != ours {
                differences.append("\(line): MPD \(String(decoding: theirs.prefix(80), as: UTF8.self)), Tonearm \(String(decoding: ours.prefix(80), as: UTF8.self))")
            }
        }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        #expect(chunks == 6)
    }

    /// Songs are printed with the tags `tagtypes` leaves on, as MPD prints them.
    @Test func songsHaveTheTagsTagtypesLeavesOn() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        let connection = try MPDConnection(socketPath: f.mpd.socketPath)
        _ = try connection.request("tagtypes clear")
        _ = try connection.request("tagtypes enable Artist Track")
        for c in ["lsinfo \"Alpha Band/First Album\"", "find album \"First Album\"", "listallinfo zeta"] {
            let request = try MPDRequest(line: Array(c.utf8))
            let ours = try f.responder.respond(command: request.command, arguments: request.arguments, tagTypes: [.artist, .track])
            let theirs = try connection.request(c)
            #expect(Self.normalised(theirs) == Self.normalised(ours.split(separator: "\n").map(String.init)), "\(c)")
            #expect(theirs.contains { $0.hasPrefix("Track: ") } && !theirs.contains { $0.hasPrefix("Title: ") })
        }
    }

    /// `findadd`/`searchadd`'s songs and `add`'s files.
    @Test func songsForAddAreThoseFindFinds() async throws {
        let f = try await Self.fixture()
        defer { f.mpd.stop() }
        let found = Self.answer(f.responder, "search album first").compactMap { $0.hasPrefix("file: ") ? String($0.dropFirst(6)) : nil }
        #expect(found.count == 4)
        #expect(try f.responder.songURIs(matching: .compare(.tag(.album), .contains, "first"), foldCase: true) == found)
        #expect(try f.responder.songURIs(matching: .compare(.tag(.album), .contains, "first"), foldCase: false).isEmpty)
        #expect(try f.responder.songURIs(under: "Beta") == ["Beta/First Album/01 Uno.mp3", "Beta/First Album/b.mp3"]
            || f.responder.songURIs(under: "Beta") == ["Beta/First Album/b.mp3", "Beta/First Album/01 Uno.mp3"])
        #expect(f.responder.filePath(forURI: "top.mp3") == f.responder.musicRoot + "/top.mp3")
        #expect(try f.responder.songURIs(filterArguments: ["album", "first"], command: "searchadd") == found)
        #expect(try f.responder.songURIs(filterArguments: ["album", "first"], command: "findadd").isEmpty)
        let sorted = try f.responder.songURIs(filterArguments: ["album", "First Album", "sort", "Title", "window", "0:2"], command: "findadd")
        #expect(sorted == ["Alpha Band/First Album/01 One.flac", "Alpha Band/First Album/02 Two.flac"])
    }
}

extension MPDLibraryPeerTests {
    /// `sticker` with ratings, sent to MPD (with a sticker database) and to the library's
    /// responder, line for line: set, get, list, find (a folder, everything, a song's URI, with
    /// `=`, `<`, `>`), delete one or all, and the errors (no such song, sticker, domain or
    /// operator; a bad request). `find`'s songs are compared as a set (MPD lists them in its
    /// sticker table's order, the library in the database's).
    @Test func stickersAnswerAsMPDs() async throws {
        let f = try await Self.fixture(stickers: true)
        defer { f.mpd.stop() }
        let one = #""Alpha Band/First Album/01 One.flac""#, two = #""Alpha Band/First Album/02 Two.flac""#, uno = #""Beta/First Album/01 Uno.mp3""#
        let lines = [
            "sticker get song \(one) rating", "sticker list song \(one)",
            "sticker set song \(one) rating 4", "sticker set song \(two) rating 2", "sticker set song \(uno) rating 5",
            "sticker get song \(one) rating", "sticker list song \(one)", "sticker get song \(one) playcountx",
            "sticker find song \"\" rating", "sticker find song \"Alpha Band\" rating", "sticker find song Beta rating",
            "sticker find song \(one) rating", "sticker find song nosuch rating", "sticker find song \"\" other",
            "sticker find song \"\" rating = 4", "sticker find song \"\" rating < 4", "sticker find song \"\" rating > 2",
            "sticker find song \"\" rating ~ 4", "sticker find song \"\" rating =",
            "sticker get song nosuch.flac rating", "sticker set song nosuch.flac rating 1", "sticker list song nosuch.flac",
            "sticker delete song nosuch.flac",
            "sticker get video \(one) rating", "sticker list video \(one)", "sticker foo song \(one)", "sticker get song \(one)",
            "sticker set song \(one) rating", "sticker list song \(one) rating",
            "sticker delete song \(one) rating", "sticker delete song \(one) rating", "sticker get song \(one) rating",
            "sticker delete song \(uno)", "sticker delete song \(uno)", "sticker list song \(uno)",
            "sticker find song \"\" rating",
        ]
        var differences: [String] = []
        for line in lines {
            var theirs = try f.mpd.exchange([Array(line.utf8)])
            var ours = Self.answer(f.responder, line)
            if line.hasPrefix("sticker find") {
                theirs = Self.songPairs(theirs)
                ours = Self.songPairs(ours)
            }
            if theirs != ours { differences.append("\(line):\n  MPD     \(theirs)\n  Tonearm \(ours)") }
        }
        #expect(differences.isEmpty, Comment(rawValue: differences.joined(separator: "\n")))
        // The rating is the library's.
        let item = try #require(try f.library.item(atPath: f.responder.musicRoot + "/Alpha Band/First Album/02 Two.flac"))
        #expect(item.rating == 2)
    }

    /// `file:`/`sticker:` pairs sorted (the last line, `OK` or an ACK, kept last).
    static func songPairs(_ lines: [String]) -> [String] {
        guard let last = lines.last else { return lines }
        var pairs: [String] = []
        var i = 0
        let body = Array(lines.dropLast())
        while i < body.count {
            pairs.append(body[i] + (i + 1 < body.count ? " | " + body[i + 1] : ""))
            i += 2
        }
        return pairs.sorted() + [last]
    }
}

/// One connection to MPD kept open (``PrivateMPD/exchange(_:timeout:)`` opens one per request).
final class MPDConnection {
    private let socket: MPDLineSocket

    init(socketPath: String) throws { socket = try MPDLineSocket(unixPath: socketPath) }

    func readLine(timeout: Double) throws -> String {
        guard let line = try socket.readLine(timeout: timeout) else { throw TestSupportError("mpd closed the connection") }
        return line
    }

    /// Sends `line`, returns the answer's lines up to `OK` (throws on `ACK`).
    func request(_ line: String, timeout: Double = 30) throws -> [String] {
        socket.send(Array(line.utf8) + [10])
        var out: [String] = []
        while true {
            let l = try readLine(timeout: timeout)
            if l == "OK" { return out }
            if l.hasPrefix("ACK ") { throw TestSupportError("\(line): \(l)") }
            out.append(l)
        }
    }

    /// Sends `line`, returns the answer's bytes as sent, up to `OK\n` or an `ACK` line (with
    /// `binary: N` chunks read as N bytes).
    func raw(_ line: String, timeout: Double = 30) throws -> [UInt8] {
        socket.send(Array(line.utf8) + [10])
        var out: [UInt8] = []
        while true {
            let l = try readLine(timeout: timeout)
            out += Array(l.utf8) + [10]
            if l == "OK" || l.hasPrefix("ACK ") { return out }
            if l.hasPrefix("binary: "), let n = Int(l.dropFirst(8)) {
                while socket.pending.count < n + 1 {
                    guard try socket.fill(timeout: timeout) else { throw TestSupportError("mpd closed the connection") }
                }
                out += socket.pending[..<(n + 1)]
                socket.pending.removeSubrange(..<(n + 1))
            }
        }
    }

    /// Starts an update and returns when no update runs any more. MPD keeps a client's events
    /// while it is not idle, so an update that ends between `status` and `idle` is not missed.
    func waitForUpdate() throws {
        _ = try request("update")
        while try request("status").contains(where: { $0.hasPrefix("updating_db: ") }) {
            _ = try request("idle update")
        }
    }
}
