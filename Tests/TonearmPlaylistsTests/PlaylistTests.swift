// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmNetwork
import TonearmPlaylists
import TonearmTestSupport

/// A small deterministic generator, so that the garbage inputs are the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func file(_ dir: TempDir, _ name: String) -> URL { URL(fileURLWithPath: dir.file(name)) }

private func write(_ dir: TempDir, _ name: String, _ bytes: [UInt8]) throws -> URL {
    let u = file(dir, name)
    try Data(bytes).write(to: u)
    return u
}

private func write(_ dir: TempDir, _ name: String, _ text: String) throws -> URL {
    try write(dir, name, Array(text.utf8))
}

/// The error `body` throws (the API throws only `TonearmError`), or nil.
private func playlistError(_ body: () throws -> Void) -> TonearmError? {
    do { try body() } catch { return error as? TonearmError }
    return nil
}

/// A playlist as it reads back from `format`: M3U and PLS have no artist or album, PLS no playlist
/// title and whole-second lengths.
private func expected(_ p: Playlist, in format: PlaylistFormat) -> Playlist {
    var q = p
    for i in q.entries.indices {
        if format != .xspf {
            q.entries[i].artist = nil
            q.entries[i].album = nil
        }
        if format == .pls {
            q.entries[i].duration = q.entries[i].duration.map { $0.rounded() }
        }
    }
    if format == .pls { q.title = nil }
    return q
}

@Suite struct PlaylistTests {
    /// Names that break naive writers: spaces, non-ASCII, Chinese, `#`, `%`, `&`, a sub-folder.
    static let awkwardNames = [
        "周杰伦 - 晴天.flac", "Beyoncé.mp3", "#1 hit.mp3", "100% pure & simple.mp3", "Sub Folder/Ça va?.ogg",
        "a%20b.wav", "x:y.mp3",
    ]

    private func sample(in dir: TempDir) -> Playlist {
        var entries = Self.awkwardNames.enumerated().map { i, name in
            PlaylistEntry(location: .init(path: dir.file(name)),
                          title: i == 0 ? "周杰伦 - 晴天" : "Title <\(i)> & \"quotes\", 'commas'",
                          duration: i == 1 ? nil : Double(100 + i) + (i == 2 ? 0.5 : 0),
                          artist: i == 0 ? "周杰伦" : (i == 1 ? "Beyoncé & Co" : nil),
                          album: i == 0 ? "叶惠美" : nil)
        }
        entries.append(PlaylistEntry(location: .init(path: "/srv/other music/Outside #2.mp3"), title: "Outside"))
        entries.append(PlaylistEntry(url: URL(string: "https://example.com/stream.mp3?x=1&y=2")!, title: "Stream"))
        entries.append(PlaylistEntry(url: URL(string: "http://radio.example/live")!))
        entries.append(PlaylistEntry(location: .init(path: dir.file("plain.mp3"))))
        return Playlist(title: "Mix & <Match> — 混合", entries: entries)
    }

    @Test(arguments: PlaylistFormat.allCases)
    func roundTripGivesAnEqualPlaylist(format: PlaylistFormat) throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let p = sample(in: dir)
        let url = file(dir, "list.\(format.fileExtension)")
        try p.write(to: url)
        let back = try Playlist.read(from: url)
        #expect(back == expected(p, in: format))
        // Written relative to the playlist's folder where possible, absolute otherwise.
        let text = try String(contentsOf: url, encoding: .utf8)
        switch format {
        case .m3u, .m3u8:
            #expect(text.hasPrefix("#EXTM3U\n"))
            #expect(text.contains("\n#EXTINF:100,周杰伦 - 晴天\n周杰伦 - 晴天.flac\n"))
            #expect(text.contains("\n./#1 hit.mp3\n"))
            #expect(text.contains("\nSub Folder/Ça va?.ogg\n"))
            #expect(text.contains("\n/srv/other music/Outside #2.mp3\n"))
            #expect(text.contains("\nhttps://example.com/stream.mp3?x=1&y=2\n"))
            #expect(!text.contains(dir.path))
        case .pls:
            #expect(text.hasPrefix("[playlist]\n"))
            #expect(text.contains("File1=周杰伦 - 晴天.flac\nTitle1=周杰伦 - 晴天\nLength1=100\n"))
            #expect(text.contains("Length2=-1\n"))
            #expect(text.contains("NumberOfEntries=11\nVersion=2\n"))
        case .xspf:
            #expect(text.contains("<location>%E5%91%A8%E6%9D%B0%E4%BC%A6%20-%20%E6%99%B4%E5%A4%A9.flac</location>"))
            #expect(text.contains("<location>%231%20hit.mp3</location>"))
            #expect(text.contains("<location>100%25%20pure%20%26%20simple.mp3</location>"))
            #expect(text.contains("<location>x%3Ay.mp3</location>"))
            #expect(text.contains("<location>file:///srv/other%20music/Outside%20%232.mp3</location>"))
            #expect(text.contains("<location>https://example.com/stream.mp3?x=1&amp;y=2</location>"))
            #expect(text.contains("<title>Title &lt;1&gt; &amp; &quot;quotes&quot;, &apos;commas&apos;</title>"))
            #expect(text.contains("<duration>102500</duration>"))
            #expect(text.contains("<creator>周杰伦</creator>"))
        }
        // Nothing left beside it but the playlist (the temporary file was renamed).
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["list.\(format.fileExtension)"])
    }

    @Test(arguments: PlaylistFormat.allCases)
    func writingRelativeToAnotherFolderKeepsOutsidePathsAbsolute(format: PlaylistFormat) throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("lists"), withIntermediateDirectories: true)
        let p = Playlist(entries: [
            PlaylistEntry(location: .init(path: dir.file("music/Beyoncé.mp3")), title: "B", duration: 3),
            PlaylistEntry(location: .init(path: dir.file("周杰伦 - 晴天.flac")), title: "Q", duration: 4),
        ])
        // Default base: the playlist's folder (lists/): neither entry is inside it → absolute.
        let url = file(dir, "lists/p.\(format.fileExtension)")
        try p.write(to: url)
        var text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.contains(format == .xspf ? "file://" : "\(dir.path)/music/Beyoncé.mp3"))
        #expect(try Playlist.read(from: url) == expected(p, in: format))
        // Relative to the music folder: the first relative, the second (outside it) absolute.
        try p.write(to: url, format: format, relativeTo: URL(fileURLWithPath: dir.file("music")))
        text = try String(contentsOf: url, encoding: .utf8)
        if format == .xspf {
            #expect(text.contains("<location>Beyonc%C3%A9.mp3</location>"))
            #expect(text.contains("<location>file://"))
        } else {
            #expect(text.contains("Beyoncé.mp3\n") && !text.contains("/music/Beyoncé.mp3"))
            #expect(text.contains("\(dir.path)/周杰伦 - 晴天.flac"))
        }
        // Read back against the folder the paths are relative to.
        let back = try Playlist.parse(data: Data(contentsOf: url), format: format, baseURL: URL(fileURLWithPath: dir.file("music")))
        #expect(back == expected(p, in: format))
    }

    @Test func extendedM3UWithCRLFCommentsWindowsPathsAndURLs() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let text = "\u{FEFF}#EXTM3U\r\n#PLAYLIST:Road trip\r\n\r\n# a comment\r\n#EXTINF:215,Artist - Title, with comma\r\n"
            + "Music\\Album\\01 Song.mp3\r\n#EXTINF:-1 tvg-name=\"a,b\",Radio\r\nhttp://radio.example/a%20b\r\n"
            + "   \r\nfile:///srv/music/100%25%20pure.flac\r\n../up/one.ogg\r\n/abs/path/two.ogg\r\n#EXTVLCOPT:foo\r\n"
            + "#EXTINF:12.25,\r\n./three.mp3\r\n~/four.mp3"
        let url = try write(dir, "road.m3u8", text)
        let p = try Playlist.read(from: url)
        #expect(p.title == "Road trip")
        #expect(p.entries.map(\.location) == [
            .file(path: dir.file("Music/Album/01 Song.mp3")),
            .remote(URL(string: "http://radio.example/a%20b")!),
            .file(path: "/srv/music/100% pure.flac"),
            .init(path: (dir.path as NSString).deletingLastPathComponent + "/up/one.ogg"),
            .file(path: "/abs/path/two.ogg"),
            .file(path: dir.file("three.mp3")),
            .file(path: NSHomeDirectory() + "/four.mp3"),
        ])
        // "Artist - Title" stays one display title; nothing is split into an artist.
        #expect(p.entries[0].title == "Artist - Title, with comma")
        #expect(p.entries[0].duration == 215)
        #expect(p.entries[0].artist == nil)
        #expect(p.entries[1].title == "Radio" && p.entries[1].duration == nil)
        #expect(p.entries[2].title == nil && p.entries[2].duration == nil)
        #expect(p.entries[5].title == nil && p.entries[5].duration == 12.25)
        #expect(p.entries.map(\.sourceLine) == [6, 8, 10, 11, 12, 15, 16])
    }

    @Test func plainM3UInLatin1() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        // "Beyoncé.mp3", "Ça.mp3" and "café — x.mp3" in Latin-1 / Windows-1252 (0xE9, 0xC7, 0x97).
        let bytes: [UInt8] = Array("Beyonc".utf8) + [0xE9] + Array(".mp3\n".utf8) + [0xC7] + Array("a.mp3\r\n".utf8)
            + Array("caf".utf8) + [0xE9, 0x20, 0x97, 0x20] + Array("x.mp3\n".utf8)
        let url = try write(dir, "old.m3u", bytes)
        let p = try Playlist.read(from: url)
        #expect(p.entries.map(\.location) == [
            .file(path: dir.file("Beyoncé.mp3")), .file(path: dir.file("Ça.mp3")), .file(path: dir.file("café — x.mp3")),
        ])
        #expect(p.entries.allSatisfy { $0.title == nil && $0.duration == nil })
        // The same names in UTF-8 read the same.
        let utf8 = try write(dir, "new.m3u", "Beyoncé.mp3\nÇa.mp3\ncafé — x.mp3\n")
        #expect(try Playlist.read(from: utf8) == p)
        // And in UTF-16 with a byte-order mark.
        let utf16 = try write(dir, "wide.m3u", [0xFF, 0xFE] + Array("Beyoncé.mp3\nÇa.mp3\ncafé — x.mp3\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(try Playlist.read(from: utf16) == p)
    }

    @Test func plsWithGapsIsOrderedByNumber() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let text = """
            [Playlist]
            ; comment
            NumberOfEntries=5
            File7=http://example.com/seven.mp3
            Title7=Seven
            Length7=-1
            File1=one.mp3
            Length1=61
            file3 = Sub\\three.mp3
            Title3=Three = 3
            File10=/abs/ten.ogg
            Version=2
            """
        let url = try write(dir, "gaps.pls", text.replacingOccurrences(of: "\n", with: "\r\n"))
        let p = try Playlist.read(from: url)
        #expect(p.entries == [
            PlaylistEntry(location: .file(path: dir.file("one.mp3")), duration: 61),
            PlaylistEntry(location: .file(path: dir.file("Sub/three.mp3")), title: "Three = 3"),
            PlaylistEntry(location: .remote(URL(string: "http://example.com/seven.mp3")!), title: "Seven"),
            PlaylistEntry(location: .file(path: "/abs/ten.ogg")),
        ])
        #expect(p.entries.map(\.sourceLine) == [7, 9, 4, 11])
    }

    @Test func plsWithBadNumberingIsRefusedWithItsLine() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let cases: [(String, Int?, String)] = [
            ("[playlist]\nFile1=a.mp3\nFileX=b.mp3\n", 3, "FileX"),
            ("[playlist]\nFile0=a.mp3\n", 2, "File0"),
            ("[playlist]\nFile-2=a.mp3\n", 2, "File-2"),
            ("[playlist]\nFile1=a.mp3\nFile1=b.mp3\n", 3, "twice"),
            ("[playlist]\nFile1=a.mp3\nTitle2=B\n", 3, "without a File2"),
            ("File1=a.mp3\n", 1, "[playlist]"),
            ("[playlist]\nthis is not a key value line\n", 2, "key=value"),
            ("", nil, "[playlist]"),
        ]
        for (i, (text, line, words)) in cases.enumerated() {
            let url = try write(dir, "bad\(i).pls", text)
            let error = playlistError { _ = try Playlist.read(from: url) }
            guard case .invalidPlaylist(let path, let l, let reason)? = error else {
                Issue.record("case \(i): expected invalidPlaylist, got \(String(describing: error))")
                continue
            }
            #expect(path == url.path)
            #expect(l == line, "case \(i)")
            #expect(reason.contains(words), "case \(i): \(reason)")
            if let line { #expect(error!.description.hasPrefix("\(url.path), line \(line): not a valid playlist")) }
        }
    }

    @Test func xspfWithEntitiesCDATAAndRelativeURIs() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
              <title>Rock &amp; Roll &lt;live&gt;</title>
              <creator>not a track creator</creator>
              <trackList>
                <track>
                  <location>Simon%20%26%20Garfunkel/The%20Boxer.flac</location>
                  <location>ignored-second-location.flac</location>
                  <title>The Boxer &#x2014; &quot;Live&quot; &apos;69</title>
                  <creator>Simon &amp; Garfunkel</creator>
                  <album><![CDATA[Bridge <Over> Troubled Water]]></album>
                  <duration>308600</duration>
                  <extension application="http://example.com"><title>not this</title></extension>
                </track>
                <track>
                  <location>file:///srv/music/%E5%91%A8%E6%9D%B0%E4%BC%A6/%E6%99%B4%E5%A4%A9.flac</location>
                  <title>&#26228;&#22825;</title>
                </track>
                <track><identifier>urn:no-location</identifier></track>
                <track>
                  <location>https://example.com/a.ogg?x=1&amp;y=2</location>
                </track>
              </trackList>
            </playlist>
            """
        // Named .xml: the content says XSPF.
        let url = try write(dir, "rock.xml", xml)
        let p = try Playlist.read(from: url)
        #expect(p.title == "Rock & Roll <live>")
        #expect(p.entries == [
            PlaylistEntry(location: .file(path: dir.file("Simon & Garfunkel/The Boxer.flac")),
                          title: "The Boxer — \"Live\" '69", duration: 308.6,
                          artist: "Simon & Garfunkel", album: "Bridge <Over> Troubled Water"),
            PlaylistEntry(location: .file(path: "/srv/music/周杰伦/晴天.flac"), title: "晴天"),
            PlaylistEntry(location: .remote(URL(string: "https://example.com/a.ogg?x=1&y=2")!)),
        ])
        #expect(p.entries.map(\.sourceLine) == [6, 15, 20])
    }

    /// Found by fuzzing (scripts/fuzz, FuzzPlaylists): an XSPF whose element name holds bytes
    /// that are not UTF-8 crashed the process inside Foundation's XMLParser. It is refused,
    /// naming the line of the first such byte.
    @Test func xspfThatIsNotUTF8IsRefusedNotCrashed() throws {
        var bytes = Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n<trackList>\n<".utf8)
        bytes += [0xF4, 0xF4, 0xF4, 0xF4]
        bytes += Array("></trackList>\n</playlist>\n".utf8)
        let error = playlistError { _ = try Playlist.parse(data: Data(bytes), format: .xspf) }
        guard case .invalidPlaylist(_, let line?, let reason)? = error else {
            Issue.record("expected invalidPlaylist with a line, got \(String(describing: error))")
            return
        }
        #expect(line == 4)
        #expect(reason.contains("UTF-8"), "\(reason)")
    }

    /// Found by fuzzing (scripts/fuzz, FuzzPlaylists): a processing instruction without data
    /// (`<?xm?>`) crashed the process inside Foundation's XMLParser (a null pointer). It is
    /// refused, naming its line; one with data (a stylesheet) is still read.
    @Test func xspfWithAnEmptyProcessingInstructionIsRefusedNotCrashed() throws {
        let body = "<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n<trackList><track><location>http://example.com/a.mp3</location></track></trackList>\n</playlist>\n"
        let error = playlistError { _ = try Playlist.parse(data: Data(("<?xml version=\"1.0\"?>\n\n<?xm?>\n" + body).utf8), format: .xspf) }
        guard case .invalidPlaylist(_, let line?, let reason)? = error else {
            Issue.record("expected invalidPlaylist with a line, got \(String(describing: error))")
            return
        }
        #expect(line == 3)
        #expect(reason.contains("processing instruction"), "\(reason)")
        let styled = try Playlist.parse(data: Data(("<?xml version=\"1.0\"?>\n<?xml-stylesheet href=\"s.xsl\"?>\n" + body).utf8), format: .xspf)
        #expect(styled.entries.count == 1)
    }

    /// The whole body of a GET through the player's HTTP client (throws for a status >= 400).
    private func download(_ url: URL) throws -> [UInt8] {
        let response = try HTTPClient.get(url)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try buffer.withUnsafeMutableBytes { try response.read(into: $0) }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    /// An M3U fetched over HTTP: its relative entries are requested from that server as written,
    /// an escape already there (`sub%20dir`) kept as it is, not encoded again (`sub%2520dir`, a
    /// 404); a space encoded once; a `%` that starts no escape encoded. Checked on the paths the
    /// test server logged, and by the files' bytes coming back.
    @Test func m3uOverHTTPRequestsItsRelativeEntriesEncodedOnce() async throws {
        let dir = try TempDir("tonearm-playlist-http")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("sub dir"), withIntermediateDirectories: true)
        let names = ["sub dir/a.flac", "sub dir/b.flac", "100% live.flac", "sub dir/\u{6674}.flac"]
        for (i, n) in names.enumerated() { _ = try write(dir, n, [UInt8](repeating: UInt8(i + 1), count: 100 + i)) }
        _ = try write(dir, "list.m3u", "#EXTM3U\nsub%20dir/a.flac\nsub dir/b.flac\n100% live.flac\nsub%20dir/%E6%99%B4.flac\n")
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let listURL = server.plainURL("/list.m3u")
        let playlist = try Playlist.parse(data: Data(try download(listURL)), format: .m3u, baseURL: listURL)
        #expect(playlist.entries.count == names.count)
        for (i, entry) in playlist.entries.enumerated() {
            #expect(entry.location.isRemote)
            let bytes = try download(entry.location.url)
            #expect(bytes == [UInt8](repeating: UInt8(i + 1), count: 100 + i), "entry \(i + 1): \(entry.location.url)")
        }
        // The server logs a request's end after the client has read it: wait for the four lines.
        let entries: @Sendable ([RequestLogEntry]) -> [RequestLogEntry] = { all in all.filter { $0.path != "/list.m3u" } }
        #expect(await server.waitForRequests(timeout: 10) { entries($0).count == names.count && entries($0).allSatisfy(\.complete) })
        let logged = entries(server.requests())
        #expect(logged.map(\.path) == names.map { "/" + $0 })
        #expect(logged.map(\.target) == ["/sub%20dir/a.flac", "/sub%20dir/b.flac", "/100%25%20live.flac", "/sub%20dir/%E6%99%B4.flac"])
        #expect(logged.map(\.status) == [200, 200, 200, 200])
    }

    /// An XSPF that declares ISO-8859-1 or windows-1252 is read: its text transcoded to UTF-8
    /// before the XML parser (titles, creators and relative locations with accented letters,
    /// windows-1252's curly quote and euro sign).
    @Test func xspfDeclaringLatin1OrWindows1252IsTranscoded() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        func latin1(_ s: String, _ encoding: String.Encoding) -> [UInt8] { Array(s.data(using: encoding)!) }
        let body = """
            <playlist version="1" xmlns="http://xspf.org/ns/0/">
            <title>Caf\u{E9} mix</title>
            <trackList>
            <track><location>D\u{E9}j\u{E0} Vu/01 Beyonc\u{E9}.flac</location><title>D\u{E9}j\u{E0} Vu</title><creator>Beyonc\u{E9}</creator><album>B\u{E4}r \u{D8}re</album></track>
            <track><location>file:///m/Na\u{EF}ve.mp3</location><title>Na\u{EF}ve \u{BD}</title></track>
            </trackList>
            </playlist>

            """
        for decl in ["<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n", "<?xml version='1.0' encoding='latin1' standalone='yes'?>\n"] {
            let url = try write(dir, "latin1.xspf", latin1(decl + body, .isoLatin1))
            let p = try Playlist.read(from: url)
            #expect(p.title == "Caf\u{E9} mix")
            #expect(p.entries.map(\.title) == ["D\u{E9}j\u{E0} Vu", "Na\u{EF}ve \u{BD}"])
            #expect(p.entries.first?.artist == "Beyonc\u{E9}")
            #expect(p.entries.first?.album == "B\u{E4}r \u{D8}re")
            #expect(p.entries.map(\.location.path) == [dir.file("D\u{E9}j\u{E0} Vu/01 Beyonc\u{E9}.flac"), "/m/Na\u{EF}ve.mp3"])
        }
        let cp1252 = body.replacingOccurrences(of: "Caf\u{E9} mix", with: "Caf\u{E9}\u{2019}s \u{20AC}5 mix")
        let url = try write(dir, "cp1252.xspf", latin1("<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n" + cp1252, .windowsCP1252))
        #expect(try Playlist.read(from: url).title == "Caf\u{E9}\u{2019}s \u{20AC}5 mix")
    }

    /// What stays refused: bytes that are not text in the declared encoding (windows-1252's
    /// curly quote in an ISO-8859-1 file, an undefined windows-1252 byte, a non-ASCII byte in
    /// US-ASCII), naming the line; an encoding that is not supported; Latin-1 bytes with no
    /// declaration (XSPF is UTF-8).
    @Test func xspfBytesInvalidForTheDeclaredEncodingAreRefusedNamingTheLine() throws {
        func xspf(_ declaration: String, line3: [UInt8]) -> Data {
            Data(Array("\(declaration)<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n".utf8) + Array("<title>".utf8) + line3
                 + Array("</title>\n<trackList/>\n</playlist>\n".utf8))
        }
        let cases: [(String, [UInt8], Int, String)] = [
            ("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n", Array("it".utf8) + [0x92] + Array("s".utf8), 3, "byte 0x92 is not text in ISO-8859-1"),
            ("<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n", [0x41, 0x81], 3, "byte 0x81 is not text in windows-1252"),
            ("<?xml version=\"1.0\" encoding=\"US-ASCII\"?>\n", [0x43, 0x61, 0x66, 0xE9], 3, "byte 0xE9 is not text in US-ASCII"),
            ("<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>\n", Array("x".utf8), 1, "encoding 'Shift_JIS' is not supported"),
            ("<?xml version=\"1.0\"?>\n", [0x43, 0x61, 0x66, 0xE9], 3, "not UTF-8"),
        ]
        for (declaration, text, line, reason) in cases {
            let error = playlistError { _ = try Playlist.parse(data: xspf(declaration, line3: text), format: .xspf) }
            guard case .invalidPlaylist(_, let l?, let r)? = error else {
                Issue.record("expected invalidPlaylist with a line for \(declaration), got \(String(describing: error))")
                continue
            }
            #expect(l == line, "\(declaration)")
            #expect(r.contains(reason), "\(r)")
        }
    }

    @Test func malformedXMLNamesTheLine() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let xml = "<?xml version=\"1.0\"?>\n<playlist version=\"1\" xmlns=\"http://xspf.org/ns/0/\">\n<trackList>\n<track><location>a.mp3</location>\n<title>A & B</title>\n</track>\n</trackList>\n</playlist>\n"
        let url = try write(dir, "bad.xspf", xml)
        let error = playlistError { _ = try Playlist.read(from: url) }
        guard case .invalidPlaylist(let path, let line?, let reason)? = error else {
            Issue.record("expected invalidPlaylist with a line, got \(String(describing: error))")
            return
        }
        #expect(path == url.path)
        #expect(line == 5)
        #expect(reason.contains("malformed XML: a bare '&'"), "\(reason)")
        #expect(error!.description.hasPrefix("\(url.path), line 5: "))

        // Not an XSPF root element.
        let other = try write(dir, "other.xspf", "<?xml version=\"1.0\"?>\n<html><body/></html>\n")
        let e2 = playlistError { _ = try Playlist.read(from: other) }
        guard case .invalidPlaylist(_, 2?, let r2)? = e2 else {
            Issue.record("expected invalidPlaylist at line 2, got \(String(describing: e2))")
            return
        }
        #expect(r2.contains("<html>"))
    }

    @Test func missingEntriesAreReportedAndSkipped() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        for name in ["here.mp3", "周杰伦 - 晴天.flac"] {
            try Data([1, 2, 3]).write(to: file(dir, name))
        }
        try FileManager.default.createDirectory(atPath: dir.file("a folder"), withIntermediateDirectories: true)
        let text = "#EXTM3U\n#EXTINF:1,Here\nhere.mp3\ngone.mp3\n\n周杰伦 - 晴天.flac\nhttp://example.com/x.mp3\n#EXTINF:2,Dir\na folder\n/nowhere/at all.ogg\n"
        let url = try write(dir, "m.m3u", text)
        let p = try Playlist.read(from: url)
        #expect(p.entries.count == 6)
        let (playable, missing) = p.entriesCheckingFiles()
        #expect(playable.map(\.location) == [
            .file(path: dir.file("here.mp3")), .file(path: dir.file("周杰伦 - 晴天.flac")),
            .remote(URL(string: "http://example.com/x.mp3")!),
        ])
        #expect(missing.map(\.index) == [1, 4, 5])
        #expect(missing.map(\.entry.sourceLine) == [4, 9, 10])
        #expect(missing.map(\.path) == [dir.file("gone.mp3"), dir.file("a folder"), "/nowhere/at all.ogg"])
        #expect(missing.map(\.reason) == [
            .fileNotFound(path: dir.file("gone.mp3")), .isDirectory(path: dir.file("a folder")),
            .fileNotFound(path: "/nowhere/at all.ogg"),
        ])
        #expect(missing[0].description == "entry 2 (line 4): \(dir.file("gone.mp3")): file not found")
    }

    /// M3U and PLS entries written percent-encoded (`sub%20dir/%E6%99%B4.flac`) name the decoded
    /// file when there is none of the literal name (relative and absolute); a file whose name
    /// holds `%20` is taken as written; missing either way, the entry stays as written.
    @Test func percentEncodedPathsAreDecodedWhenTheLiteralOneIsMissing() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.file("sub dir"), withIntermediateDirectories: true)
        for name in ["sub dir/晴.flac", "a%20b.wav", "a b.wav"] { try Data([1, 2, 3]).write(to: file(dir, name)) }
        let absolute = dir.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)! + "/sub%20dir/%E6%99%B4.flac"
        let m3u = try write(dir, "m.m3u", "#EXTM3U\nsub%20dir/%E6%99%B4.flac\na%20b.wav\n\(absolute)\ngone%20away.flac\n")
        let pls = try write(dir, "p.pls", "[playlist]\nFile1=sub%20dir/%E6%99%B4.flac\nNumberOfEntries=1\n")
        #expect(try Playlist.read(from: m3u).entries.map(\.location) == [
            .file(path: dir.file("sub dir/晴.flac")), .file(path: dir.file("a%20b.wav")),
            .file(path: dir.file("sub dir/晴.flac")), .file(path: dir.file("gone%20away.flac")),
        ])
        #expect(try Playlist.read(from: pls).entries.map(\.location) == [.file(path: dir.file("sub dir/晴.flac"))])
    }

    @Test func formatIsDetectedByContentWhenTheNameSaysNothingOrLies() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let p = Playlist(title: "T", entries: [PlaylistEntry(location: .init(path: dir.file("a b.mp3")), title: "A", duration: 5)])
        for format in PlaylistFormat.allCases {
            try p.write(to: file(dir, "src.\(format.fileExtension)"))
            let data = try Data(contentsOf: file(dir, "src.\(format.fileExtension)"))
            #expect(PlaylistFormat.sniff(data) == (format == .m3u ? .m3u8 : format))
            // No extension, a wrong one, an unrelated one: all read as the content says.
            for name in ["noext", "wrong.\(format == .pls ? "xspf" : "pls")", "list.txt"] {
                let u = try write(dir, name, [UInt8](data))
                #expect(try Playlist.read(from: u) == expected(p, in: format), "\(format) as \(name)")
            }
            #expect(try Playlist.parse(data: data, baseURL: URL(fileURLWithPath: dir.path)) == expected(p, in: format))
        }
        // A plain list without a signature: the extension decides; without one it is plain M3U.
        let plain = Data("a b.mp3\n".utf8)
        #expect(PlaylistFormat.sniff(plain) == nil)
        #expect(PlaylistFormat.detect(data: plain, fileExtension: "m3u") == .m3u)
        #expect(PlaylistFormat.detect(data: plain, fileExtension: "M3U8") == .m3u8)
        #expect(PlaylistFormat.detect(data: plain, fileExtension: nil) == .m3u)
        #expect(PlaylistFormat.detect(data: Data([0, 1, 2, 3, 0xFF]), fileExtension: nil) == nil)
        #expect(PlaylistFormat.detect(data: Data("#EXTM3U\n".utf8), fileExtension: "m3u") == .m3u)
        #expect(PlaylistFormat.detect(data: Data("[playlist]\n".utf8), fileExtension: "m3u") == .pls)
    }

    @Test func readErrorsNameTheFile() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let missing = file(dir, "nope.m3u")
        #expect(playlistError { _ = try Playlist.read(from: missing) } == .fileNotFound(path: missing.path))
        #expect(playlistError { _ = try Playlist.read(from: URL(fileURLWithPath: dir.path)) } == .isDirectory(path: dir.path))
        #expect(playlistError { _ = try Playlist.read(from: URL(string: "http://example.com/a.m3u")!) }
            == .invalidURL("http://example.com/a.m3u"))
        let empty = try write(dir, "empty", [UInt8]())
        #expect(playlistError { _ = try Playlist.read(from: empty) } == .emptyFile(path: empty.path))
        // An empty .m3u is an empty playlist.
        let emptyM3U = try write(dir, "empty.m3u", [UInt8]())
        #expect(try Playlist.read(from: emptyM3U) == Playlist())
        // Binary content: not a playlist, whatever the name.
        let binary: [UInt8] = [0x66, 0x4C, 0x61, 0x43, 0x00, 0x00, 0x00, 0x22, 0x10, 0x00]
        for name in ["song.flac", "noext"] {
            let u = try write(dir, name, binary)
            guard case .invalidPlaylist(let path, nil, let reason)? = playlistError({ _ = try Playlist.read(from: u) }) else {
                Issue.record("\(name): expected invalidPlaylist")
                continue
            }
            #expect(path == u.path && reason.contains("M3U, PLS or XSPF"))
        }
        let m3u = try write(dir, "song.m3u", Array("ok.mp3\n".utf8) + binary)
        #expect(playlistError { _ = try Playlist.read(from: m3u) }
            == .invalidPlaylist(path: m3u.path, line: 2, reason: "binary data, not text"))
        #expect(playlistError { _ = try Playlist.parse(data: Data(binary)) }
            == .invalidPlaylist(path: "playlist", line: nil, reason: "the content is not M3U, PLS or XSPF"))
    }

    @Test func writeErrorsAndAtomicReplacement() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let p = Playlist(entries: [PlaylistEntry(location: .init(path: dir.file("a.mp3")))])
        let url = file(dir, "p.m3u8")
        try Playlist(entries: [PlaylistEntry(location: .init(path: dir.file("old.mp3")))]).write(to: url)
        try p.write(to: url)
        #expect(try Playlist.read(from: url) == p)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["p.m3u8"])

        let noFolder = file(dir, "missing/p.m3u8")
        guard case .writeFailed(let path, let reason)? = playlistError({ try p.write(to: noFolder) }) else {
            Issue.record("expected writeFailed")
            return
        }
        #expect(path == noFolder.path && reason.contains("does not exist"))
        #expect(playlistError { try p.write(to: URL(fileURLWithPath: dir.path), format: .pls) } == .isDirectory(path: dir.path))
        guard case .invalidArgument? = playlistError({ try p.write(to: file(dir, "p.txt")) }) else {
            Issue.record("expected invalidArgument for an unknown extension")
            return
        }
        // A read-only folder: the write fails and leaves nothing behind (skipped when running as root).
        let ro = dir.file("ro")
        try FileManager.default.createDirectory(atPath: ro, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: ro)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: ro) }
        if !FileManager.default.isWritableFile(atPath: ro) {
            guard case .writeFailed? = playlistError({ try p.write(to: URL(fileURLWithPath: ro + "/p.xspf")) }) else {
                Issue.record("expected writeFailed in a read-only folder")
                return
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: ro).isEmpty)
        }
        // The text alone, without a file.
        #expect(p.text(format: .m3u8, relativeTo: URL(fileURLWithPath: dir.path)) == "#EXTM3U\na.mp3\n")
    }

    @Test func namesALineFormatCannotCarryAreWrittenAsFileURIs() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        let p = Playlist(entries: [
            PlaylistEntry(location: .init(path: dir.file(" leading space.mp3"))),
            PlaylistEntry(location: .init(path: dir.file("trailing space .mp3"))),
            PlaylistEntry(location: .init(path: dir.file("back\\slash.mp3"))),
            PlaylistEntry(location: .init(path: dir.file("~tilde.mp3"))),
            PlaylistEntry(location: .init(path: dir.file("http:/x.mp3"))),
        ])
        for format in PlaylistFormat.allCases {
            let url = file(dir, "p.\(format.fileExtension)")
            try p.write(to: url)
            #expect(try Playlist.read(from: url) == p, "\(format)")
        }
    }

    @Test func relativeEntriesOfARemotePlaylistAreURLs() throws {
        let base = URL(string: "https://example.com/lists/")!
        let p = try Playlist.parse(data: Data("#EXTM3U\na b.mp3\n../other/c.ogg\n/root.mp3\nhttp://x.example/y\n".utf8), baseURL: base)
        #expect(p.entries.map(\.location) == [
            .remote(URL(string: "https://example.com/lists/a%20b.mp3")!),
            .remote(URL(string: "https://example.com/other/c.ogg")!),
            .remote(URL(string: "https://example.com/root.mp3")!),
            .remote(URL(string: "http://x.example/y")!),
        ])
    }

    @Test func garbageAndTruncatedInputNeverCrash() throws {
        let dir = try TempDir("tonearm-playlist")
        defer { dir.remove() }
        var rng = SplitMix64(state: 4)
        let base = URL(fileURLWithPath: dir.path)
        var formats: [PlaylistFormat?] = PlaylistFormat.allCases
        formats.append(nil)
        for _ in 0..<200 {
            let count = Int.random(in: 0..<600, using: &rng)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for f in formats {
                _ = try? Playlist.parse(data: Data(bytes), format: f, baseURL: base)
            }
        }
        // Printable garbage (no binary bytes) gets further into the parsers.
        let alphabet = Array("[]=#:,<>/&;%\\\" \n\r\tFileTitleLength123playlist<track><location>EXTINF-.".utf8)
        for _ in 0..<300 {
            let count = Int.random(in: 0..<300, using: &rng)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &rng)! }
            for f in formats {
                _ = try? Playlist.parse(data: Data(bytes), format: f, baseURL: base)
            }
        }
        // Every prefix of a valid playlist in each format: parsed or refused, never a crash; XSPF
        // cut short is refused as malformed.
        let p = sample(in: dir)
        for format in PlaylistFormat.allCases {
            let data = Data(p.text(format: format, relativeTo: base).utf8)
            var refused = 0
            for n in stride(from: 0, to: data.count, by: 7) {
                let url = try write(dir, "cut.\(format.fileExtension)", [UInt8](data.prefix(n)))
                do {
                    let q = try Playlist.read(from: url)
                    #expect(q.entries.count <= p.entries.count)
                } catch {
                    guard case .invalidPlaylist = error else {
                        Issue.record("\(format) cut at \(n): \(error)")
                        continue
                    }
                    refused += 1
                }
            }
            if format == .xspf {
                // Every cut before the end of </playlist> is refused.
                let end = String(decoding: data, as: UTF8.self).utf8.count - "</playlist>\n".utf8.count + "</playlist>".utf8.count
                #expect(refused == stride(from: 0, to: data.count, by: 7).filter { $0 < end }.count)
            }
        }
    }
}
