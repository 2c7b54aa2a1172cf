// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Testing
import TonearmCore
import TonearmDaemon
import TonearmLibrary
import TonearmMPDLibrary
import TonearmMPDProtocol
import TonearmPlayback
import TonearmRender
import TonearmTestSupport
@testable import TonearmWeb

/// The web remote's command layer and API, offline: a real ``MPDDaemon`` (null output, nothing
/// played), the page's JSON read from its MPD answers, commands carried out through the daemon,
/// pushes on its idle events, and the HTTP API over real connections to
/// the application listening on 127.0.0.1 (``LiveWebClient``).
struct WebStateTests {
    static func batch(_ lines: String...) -> MPDRequestFramer.Batch {
        MPDRequestFramer.Batch(lines: lines.map { Array($0.utf8) }, mode: .single)
    }

    static func daemon(access: MPDAccess = .open) -> MPDDaemon {
        MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil), access: access)
    }

    static let client = MPDClientContext(isLocal: true)

    @Test func theStateAndQueueAreTheDaemonsAnswersWithoutPaths() async throws {
        let daemon = Self.daemon()
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/radio/stream.mp3"), client: Self.client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/radio/two.ogg"), client: Self.client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("repeat 1"), client: Self.client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("setvol 40"), client: Self.client).text == "OK\n")
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1")
        let state = try await remote.state(permissions: .all)
        #expect(state.state == "stop" && state.repeat && !state.random && state.queueLength == 2 && state.song == nil, "\(state)")
        #expect(state.volume == 40)
        let queue = try await remote.queue(permissions: .all)
        #expect(queue.songs.map(\.title) == ["stream.mp3", "two.ogg"])
        #expect(queue.songs.map(\.pos) == [0, 1])
        let json = WebRemote.json(queue)
        #expect(!json.contains("127.0.0.1") && !json.contains("/radio"), "no path or URL in the API: \(json)")
    }

    @Test func songsAreNamedByTagsElseTheFileNameNeverTheFolder() throws {
        let answer = """
            file: Artist/Album/01 Song.flac
            Title: 青花瓷
            Artist: 周杰伦
            Artist: Second
            Album: 我很忙
            duration: 239.500
            Pos: 0
            Id: 7
            file: Other/Folder/02 Untitled.flac
            Pos: 1
            Id: 8
            file: http://127.0.0.1:8000/radio/%E6%99%B4%E5%A4%A9.flac?rate=2000#t
            Pos: 2
            Id: 9
            OK

            """
        let songs = WebAnswer.songs(try WebAnswer.pairs(answer))
        #expect(songs == [WebSong(id: 7, pos: 0, title: "青花瓷", artist: "周杰伦", album: "我很忙", duration: 239.5),
                          WebSong(id: 8, pos: 1, title: "02 Untitled", artist: "", album: "", duration: nil),
                          // A stream without tags: its URL's last part, without the query, decoded.
                          WebSong(id: 9, pos: 2, title: "晴天.flac", artist: "", album: "", duration: nil)])
        #expect(throws: WebCommandFailure("ACK [50@0] {playid} No such song")) { try WebAnswer.pairs("ACK [50@0] {playid} No such song\n") }
        #expect(throws: WebCommandFailure.self) { try WebAnswer.pairs("state: play\n") }
    }

    @Test func commandsAreReadWithClearErrors() throws {
        func parse(_ s: String) throws(WebRequestError) -> WebCommand { try WebCommand(json: Array(s.utf8)) }
        #expect(try parse(#"{"command":"next"}"#) == .next)
        #expect(try parse(#"{"command":"seek","value":42.5}"#).mpdLine == "seekcur 42.500")
        #expect(try parse(#"{"command":"volume","value":55}"#).mpdLine == "setvol 55")
        #expect(try parse(#"{"command":"random","value":true}"#).mpdLine == "random 1")
        #expect(try parse(#"{"command":"crossfade","value":5}"#).mpdLine == "crossfade 5")
        #expect(throws: WebRequestError("\"crossfade\": \"value\" 61.0 is not a whole number in 0…60")) { try parse(#"{"command":"crossfade","value":61}"#) }
        #expect(try parse(#"{"command":"playid","value":3}"#).mpdLine == "playid 3")
        #expect(try parse(#"{"command":"deleteid","value":4}"#).mpdLine == "deleteid 4")
        #expect(throws: WebRequestError("the body is not a JSON object (expected {\"command\": NAME, \"value\": …})")) { try parse("next") }
        #expect(throws: WebRequestError("\"command\" is missing (expected {\"command\": NAME, \"value\": …})")) { try parse("{}") }
        #expect(throws: WebRequestError("\"volume\": \"value\" 101.0 is not a whole number in 0…100")) { try parse(#"{"command":"volume","value":101}"#) }
        #expect(throws: WebRequestError("\"seek\" needs a number \"value\"")) { try parse(#"{"command":"seek","value":"10"}"#) }
        #expect(throws: WebRequestError("\"repeat\" needs a true or false \"value\"")) { try parse(#"{"command":"repeat","value":1}"#) }
        #expect(throws: WebRequestError("\"seek\": \"value\" -1.0 is negative")) { try parse(#"{"command":"seek","value":-1}"#) }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"add","value":"/etc/passwd"}"#) }
    }

    /// A page's command is the daemon's: carried out through its command layer, its ACK sent back.
    @Test func commandsRunThroughTheDaemon() async throws {
        let daemon = Self.daemon()
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/a.mp3"), client: Self.client).text == "OK\n")
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/b.mp3"), client: Self.client).text == "OK\n")
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1")
        try await remote.perform(.random(true), permissions: .all)
        #expect(daemon.executeNow(Self.batch("status"), client: Self.client).text.contains("random: 1\n"))
        try await remote.perform(.crossfade(5), permissions: .all)
        #expect(daemon.executeNow(Self.batch("status"), client: Self.client).text.contains("xfade: 5\n"))
        #expect(try await remote.state(permissions: .all).crossfade == 5)
        let first = try #require(try await remote.queue(permissions: .all).songs.first)
        try await remote.perform(.deleteID(first.id), permissions: .all)
        #expect(try await remote.queue(permissions: .all).songs.map(\.title) == ["b.mp3"])
        await #expect(throws: WebCommandFailure.self) { try await remote.perform(.playID(999), permissions: .all) }
        // Without the control permission, the daemon refuses as it refuses an MPD client.
        await #expect(throws: WebCommandFailure.self) { try await remote.perform(.next, permissions: .read) }
    }

    /// A change made by any client (here an MPD command) is pushed to an open page, no polling.
    @Test func changesFromAnyClientArePushedToPages() async throws {
        let daemon = Self.daemon()
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1")
        let page = try await TestPage.open(remote, daemon: daemon)
        defer { page.close() }
        let messages = page.messages
        // First the queue and the state as they are.
        _ = try await waitForEvent(messages, "the first state") { $0.contains(#""type":"state""#) && $0.contains(#""random":false"#) }
        #expect(daemon.executeNow(Self.batch("random 1"), client: Self.client).text == "OK\n")
        _ = try await waitForEvent(messages, "random pushed") { $0.contains(#""random":true"#) }
        #expect(daemon.executeNow(Self.batch("add http://127.0.0.1:9/new.mp3"), client: Self.client).text == "OK\n")
        _ = try await waitForEvent(messages, "the queue pushed") { $0.contains(#""type":"queue""#) && $0.contains("new.mp3") }
    }

    @Test func loginIsNeededOffLoopbackAndOriginsAreChecked() throws {
        var access = MPDAccess()
        try access.addPassword(parsing: "sesame@read,control")
        let open = WebAccess(host: "127.0.0.1", access: .open)
        #expect(!open.requiresLogin && open.permissions(sessionToken: nil) == .all)
        let lan = WebAccess(host: "0.0.0.0", access: access)
        #expect(lan.requiresLogin && lan.permissions(sessionToken: nil) == nil && lan.permissions(sessionToken: "forged") == nil)
        #expect(lan.login(password: "wrong") == nil && lan.login(password: "") == nil)
        let token = try #require(lan.login(password: "sesame"))
        #expect(token.count == 64 && lan.permissions(sessionToken: token)?.isSuperset(of: [.read, .control]) == true && lan.permissions(sessionToken: token)?.contains(.admin) == false)
        // Loopback with a password: MPD's default permissions are none, so a login is needed too.
        #expect(WebAccess(host: "127.0.0.1", access: access).requiresLogin)
        #expect(throws: WebRemoteError.self) { try WebRemote(daemon: Self.daemon(), host: "0.0.0.0") }

        #expect(WebAccess.originAllowed(origin: nil, host: "h:1"))
        #expect(WebAccess.originAllowed(origin: "http://192.168.1.5:6680", host: "192.168.1.5:6680"))
        #expect(!WebAccess.originAllowed(origin: "http://evil.example", host: "192.168.1.5:6680"))
        #expect(!WebAccess.originAllowed(origin: "http://192.168.1.5:6680", host: nil))
        #expect(WebForm.value(of: "password", in: "user=x&password=a%20b+c%26") == "a b c&")
    }

    /// The HTTP API as a browser or curl meets it: status codes, bad JSON, a foreign Origin, a
    /// missing login, the cookie's attributes.
    @Test func theHTTPAPIAnswersWithStatusCodes() async throws {
        var access = MPDAccess()
        try access.addPassword(parsing: "sesame@read,add,control")
        let daemon = Self.daemon(access: access)
        let remote = try WebRemote(daemon: daemon, host: "0.0.0.0")
        try await remote.test(.live) { client in
            try await client.execute(uri: "/", method: .get) { r in
                #expect(r.status == .seeOther && r.headers[.location] == "/login")
            }
            try await client.execute(uri: "/api/state", method: .get) { r in #expect(r.status == .unauthorized) }
            try await client.execute(uri: "/api/command", method: .post, body: ByteBuffer(string: #"{"command":"next"}"#)) { r in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                     body: ByteBuffer(string: "password=nope")) { r in #expect(r.status == .unauthorized) }
            let cookie = try await client.execute(uri: "/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                                                  body: ByteBuffer(string: "password=sesame")) { r in
                #expect(r.status == .seeOther && r.headers[.location] == "/")
                return r.headers[.setCookie] ?? ""
            }
            #expect(cookie.hasPrefix(WebAccess.cookieName + "=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict")
                && cookie.contains("Max-Age=43200"), "\(cookie)")
            let session: HTTPFields = [.cookie: String(cookie.prefix { $0 != ";" })]
            try await client.execute(uri: "/", method: .get, headers: session) { r in
                #expect(r.status == .ok && String(buffer: r.body).contains("aria-label=\"Next\""))
            }
            try await client.execute(uri: "/api/command", method: .post, headers: session, body: ByteBuffer(string: "{not json")) { r in
                #expect(r.status == .badRequest && String(buffer: r.body).contains("not a JSON object"))
            }
            var foreign = session
            foreign[.origin] = "http://evil.example"
            try await client.execute(uri: "/api/command", method: .post, headers: foreign, body: ByteBuffer(string: #"{"command":"random","value":true}"#)) { r in
                #expect(r.status == .forbidden)
            }
            #expect(daemon.executeNow(Self.batch("status"), client: Self.client).text.contains("random: 0\n"), "the foreign page changed nothing")
            try await client.execute(uri: "/api/command", method: .post, headers: session, body: ByteBuffer(string: #"{"command":"random","value":true}"#)) { r in
                #expect(r.status == .ok)
            }
            #expect(daemon.executeNow(Self.batch("status"), client: Self.client).text.contains("random: 1\n"))
            try await client.execute(uri: "/api/state", method: .get, headers: session) { r in
                #expect(r.status == .ok && String(buffer: r.body).contains(#""random":true"#))
            }
            try await client.execute(uri: "/api/command", method: .post, headers: session, body: ByteBuffer(string: #"{"command":"playid","value":42}"#)) { r in
                #expect(r.status == .conflict && String(buffer: r.body).contains("ACK"))
            }
            try await client.execute(uri: "/api/command", method: .get, headers: session) { r in #expect(r.status != .ok) }
        }
    }

    /// A WebSocket upgrade is accepted on /ws from the remote's own page only, with a session
    /// when a login is required.
    @Test func webSocketUpgradesCheckOriginAndSession() throws {
        func upgrade(_ remote: WebRemote, path: String = "/ws", origin: String?, cookie: String? = nil) -> MPDPermissions? {
            var fields: HTTPFields = [:]
            if let origin { fields[.origin] = origin }
            if let cookie { fields[.cookie] = cookie }
            return remote.upgradePermissions(HTTPRequest(method: .get, scheme: nil, authority: "192.168.1.5:6680", path: path, headerFields: fields))
        }
        let local = try WebRemote(daemon: Self.daemon(), host: "127.0.0.1")
        #expect(upgrade(local, origin: "http://192.168.1.5:6680") == .all)
        #expect(upgrade(local, origin: "http://evil.example") == nil)
        #expect(upgrade(local, path: "/other", origin: "http://192.168.1.5:6680") == nil)
        var access = MPDAccess()
        try access.addPassword(parsing: "sesame@read,control")
        let lan = try WebRemote(daemon: Self.daemon(access: access), host: "0.0.0.0")
        #expect(upgrade(lan, origin: "http://192.168.1.5:6680") == nil, "no session")
        let token = try #require(lan.access.login(password: "sesame"))
        #expect(upgrade(lan, origin: "http://192.168.1.5:6680", cookie: "\(WebAccess.cookieName)=\(token)") != nil)
        #expect(upgrade(lan, origin: "http://evil.example", cookie: "\(WebAccess.cookieName)=\(token)") == nil)
    }

    /// The page's first load (HTML, style, script) stays under 150 KB and names no other site.
    @Test func thePageIsSmallAndSelfContained() {
        let all = WebPage.html + WebPage.style + WebPage.script
        #expect(all.utf8.count < 150_000)
        #expect(!all.contains("http://") && !all.contains("https://") && !all.contains("@import") && !all.contains("url("))
        for name in ["Play", "Previous", "Next", "Seek", "Volume", "Repeat", "Shuffle", "Search the library", "Playlist name", "Crossfade"] {
            #expect(WebPage.html.contains("aria-label=\"\(name)\""), "\(name)")
        }
        // Buttons named by their text; the queue's rows by the script ("Move up …", "Remove …").
        for text in [">Clear queue</button>", ">Save queue</button>"] { #expect(WebPage.html.contains(text), "\(text)") }
        for label in ["\"Move up \"", "\"Move down \"", "\"Remove \"", "\"Play next: \"", "\"Add \"", "\"Load playlist \"", "\"Output \""] {
            #expect(WebPage.script.contains(label), "\(label)")
        }
    }

    // MARK: The library, the queue's editing, outputs, sessions

    /// The daemon's database over a library, as `tonearm daemon` has it (DaemonDatabase, in the
    /// command's module): the MPD responder's answers.
    struct Database: MPDDatabaseResponder {
        let responder: MPDLibraryResponder
        var commands: Set<String> {
            MPDLibraryResponder.commands.union(MPDCommandMachine.queueDatabaseCommands).union(MPDLibraryResponder.pictureCommands)
        }
        func respond(command: String, arguments: [String], tagTypes: Set<MPDTag>) throws(MPDAck) -> String {
            try responder.respond(command: command, arguments: arguments, tagTypes: tagTypes)
        }
        func uri(forLocalPath path: String) -> String? { responder.uri(forFilePath: path) }
        func localPath(forURI uri: String) -> String? { responder.filePath(forURI: uri) }
        func songURIs(filterArguments: [String], command: String) throws(MPDAck) -> [String] {
            try responder.songURIs(filterArguments: filterArguments, command: command)
        }
        func songURIs(under uri: String, command: String) throws(MPDAck) -> [String] { try responder.songURIs(under: uri, command: command) }
        func playlistURIs(named name: String, command: String) throws(MPDAck) -> [String] { try responder.playlistURIs(named: name, command: command) }
        func savePlaylist(named name: String, uris: [String], command: String) throws(MPDAck) {
            try responder.savePlaylist(named: name, uris: uris, command: command)
        }
    }

    /// A music folder (two albums: "The Album" by Artist A, tracks 2 and 1; "我很忙" by 周杰伦 with
    /// a cover in its tags) and a folder beside it that the library also scanned but that is not
    /// one of the daemon's music folders ("Secret" by Outsider): the library holds all four songs,
    /// the daemon's database three.
    struct Fixture {
        let dir: TempDir
        let daemon: MPDDaemon
        let remote: WebRemote
        let library: MediaLibrary

        init(access: MPDAccess = .open) async throws {
            dir = try TempDir("web-library")
            let music = dir.file("music"), outside = dir.file("outside")
            for folder in [music + "/A", music + "/周杰伦", outside] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
            try Fixtures.png(path: dir.file("cover.png"))
            let songs: [(String, String, String, String, Int, Bool)] = [
                (music + "/A/one.flac", "Song One", "Artist A", "The Album", 2, false),
                (music + "/A/two.flac", "Song Two", "Artist A", "The Album", 1, false),
                (music + "/周杰伦/qinghuaci.flac", "青花瓷", "周杰伦", "我很忙", 1, true),
                (outside + "/secret.flac", "Secret", "Outsider", "Hidden", 1, false),
            ]
            for (path, title, artist, album, track, cover) in songs {
                let picture = cover ? ["-i", dir.file("cover.png"), "-map", "0", "-map", "1", "-c:v", "png", "-disposition:v", "attached_pic"] : []
                try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=duration=1"] + picture
                                          + ["-metadata", "title=\(title)", "-metadata", "artist=\(artist)", "-metadata", "album=\(album)",
                                       "-metadata", "track=\(track)", path])
            }
            library = try MediaLibrary(path: dir.file("library.db"))
            try await library.scanToEnd(folders: [music, outside])
            let responder = try MPDLibraryResponder(library: library, musicRoot: music)
            daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil), database: Database(responder: responder),
                               musicDirectories: [music], access: access)
            remote = try WebRemote(daemon: daemon, host: "127.0.0.1", library: responder)
        }

        func id(_ title: String) throws -> String {
            try #require(try MediaQuery.songs().items(in: library).first { $0.title == title }.map { String($0.persistentID) })
        }

        /// ``TestPage/open(_:daemon:)`` on this fixture's remote.
        func openPage() async throws -> TestPage { try await TestPage.open(remote, daemon: daemon) }
    }

    /// A page with every permission open on a remote: the messages pushed to it; `close()` ends it.
    struct TestPage: Sendable {
        let messages: AsyncStream<String>
        let close: @Sendable () -> Void

        /// Subscribes a page to `remote` while its pump runs (as an open browser page is), and
        /// returns once the pump listens to `daemon`'s changes.
        static func open(_ remote: WebRemote, daemon: MPDDaemon) async throws -> TestPage {
            let pump = Task { await remote.pumpChanges() }
            let (id, feed) = await remote.subscribePage(permissions: .all)
            let (messages, sink) = AsyncStream<String>.makeStream()
            let reader = Task { for await m in feed { sink.yield(m) }; sink.finish() }
            let page = TestPage(messages: messages) {
                remote.unsubscribePage(id)
                reader.cancel()
                pump.cancel()
            }
            let hub = daemon.hub
            do { try await withDeadline(10, "the pump's subscription") { while hub.count == 0 { await Task.yield() } } } catch {
                page.close()
                throw error
            }
            return page
        }
    }

    /// Artists → albums → songs through the daemon's MPD database: the music folders' songs
    /// only, named by library id, no path in any answer.
    @Test func theLibraryIsBrowsedBySongIDWithoutPaths() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let artists = try await f.remote.artists(permissions: .all)
        #expect(artists.artists == ["Artist A", "周杰伦"], "the song outside the music folders is not listed: \(artists)")
        let albums = try await f.remote.albums(artist: "Artist A", permissions: .all)
        #expect(albums.albums == [WebLibraryAlbum(name: "The Album", artist: "Artist A", songs: 2, cover: try f.id("Song Two"))])
        let songs = try await f.remote.songs(artist: "Artist A", album: "The Album", permissions: .all)
        #expect(songs.songs?.map(\.title) == ["Song Two", "Song One"], "track order")
        #expect(songs.songs?.map(\.id) == [try f.id("Song Two"), try f.id("Song One")])
        for json in [WebRemote.json(artists), WebRemote.json(albums), WebRemote.json(songs)] {
            #expect(!json.contains(f.dir.path) && !json.contains(".flac") && !json.contains("/A/"), "no path: \(json)")
        }
        // A session that may not read gets no library.
        await #expect(throws: WebLibraryError(403, "this session may not read the library")) {
            try await f.remote.artists(permissions: [.control])
        }
    }

    /// Search as you type is the library's full-text search (Chinese from any part and from
    /// its pinyin, as the terminal finds it), kept to the music folders.
    @Test func searchIsTheLibrarysWithCJKAndPinyin() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        func titles(_ text: String) throws -> [String] { try f.remote.search(text, permissions: .all).songs?.map(\.title) ?? [] }
        #expect(try titles("青花") == ["青花瓷"])
        #expect(try titles("花瓷") == ["青花瓷"])
        #expect(try titles("qinghua") == ["青花瓷"])
        #expect(try titles("zhou jie lun") == ["青花瓷"])
        #expect(try titles("song") == ["Song One", "Song Two"])
        #expect(try titles("secret").isEmpty && titles("outsider").isEmpty, "the library has it, but not in the music folders")
        #expect(try titles("  ").isEmpty)
        #expect(try f.remote.search("青花", permissions: .all).songs?.first?.id == f.id("青花瓷"))
    }

    /// Add and play next by library id go through the daemon's command layer (`addid`); a song
    /// outside the music folders, a path or `../` is refused with a clear error.
    @Test func songsAreAddedByIDAndPathsAreRefused() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let one = try UInt64(f.id("Song One"))!, two = try UInt64(f.id("Song Two"))!, cjk = try UInt64(f.id("青花瓷"))!
        try await f.remote.perform(.add([one, two], next: false), permissions: .all)
        // Nothing plays: play next adds at the end.
        try await f.remote.perform(.add([cjk], next: true), permissions: .all)
        #expect(try await f.remote.queue(permissions: .all).songs.map(\.title) == ["Song One", "Song Two", "青花瓷"])
        let info = await f.remote.execute(["playlistinfo"], permissions: .all)
        #expect(["file: A/one.flac", "file: A/two.flac", "file: 周杰伦/qinghuaci.flac"].allSatisfy(info.contains), "the database's URIs: \(info)")
        // The song outside the music folders: the library has it, the remote does not add it.
        let secret = try UInt64(f.id("Secret"))!
        await #expect(throws: WebCommandFailure("song \(secret) is not in the music folders")) {
            try await f.remote.perform(.add([secret], next: false), permissions: .all)
        }
        await #expect(throws: WebCommandFailure("the library has no song 12345")) {
            try await f.remote.perform(.add([12345], next: false), permissions: .all)
        }
        // Without `add`, the daemon refuses as it refuses an MPD client.
        await #expect(throws: WebCommandFailure.self) { try await f.remote.perform(.add([one], next: false), permissions: .read) }
        #expect(try await f.remote.queue(permissions: .all).songs.count == 3)
        // Paths are not ids.
        func parse(_ s: String) throws(WebRequestError) -> WebCommand { try WebCommand(json: Array(s.utf8)) }
        #expect(try parse(#"{"command":"add","value":"\#(one)"}"#) == .add([one], next: false))
        #expect(try parse(#"{"command":"playnext","value":["\#(one)","\#(two)"]}"#) == .add([one, two], next: true))
        for bad in ["../../etc/passwd", "/etc/passwd", "A/one.flac", "-1", "1e3", "99999999999999999999999"] {
            #expect(throws: WebRequestError("\"add\": \"\(bad)\" is not a library song id (a decimal number); the web remote takes no file paths")) {
                try parse(#"{"command":"add","value":"\#(bad)"}"#)
            }
        }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"add","value":12}"#) }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"add","value":[]}"#) }
    }

    /// Stars and play counts: a rating set by the page is the library's (and the daemon's
    /// `rating` sticker, for every MPD client); songs list their rating and play count; an
    /// open page is told to draw the list again; without MPD's `admin` permission (which
    /// `sticker` needs) the daemon refuses; bad values are clear errors.
    @Test func ratingsAndPlayCountsAreTheLibrarys() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let one = try UInt64(f.id("Song One"))!
        let page = try await f.openPage()
        defer { page.close() }
        let messages = page.messages

        try await f.remote.perform(.rate(one, stars: 4), permissions: .all)
        #expect(try f.library.item(persistentID: one)?.rating == 4)
        _ = try await waitForEvent(messages, "the page told to draw the library again") { $0 == #"{"type":"library"}"# }
        #expect(await f.remote.execute(["sticker get song \"A/one.flac\" rating"], permissions: .all) == "sticker: rating=4\nOK\n")
        try f.library.recordPlay(of: one, playedSeconds: 1)
        let songs = try await f.remote.songs(artist: "Artist A", album: "The Album", permissions: .all).songs ?? []
        #expect(songs.map(\.rating) == [0, 4] && songs.map(\.plays) == [0, 1], "\(songs)")
        #expect(try f.remote.search("song one", permissions: .all).songs?.first.map { [$0.rating, $0.plays] } == [4, 1])
        // 0 clears it.
        try await f.remote.perform(.rate(one, stars: 0), permissions: .all)
        #expect(try f.library.item(persistentID: one)?.rating == 0)
        // Without `admin`, as an MPD client without it.
        await #expect(throws: WebCommandFailure.self) { try await f.remote.perform(.rate(one, stars: 2), permissions: [.read, .add, .control]) }
        #expect(try f.library.item(persistentID: one)?.rating == 0)
        let secret = try UInt64(f.id("Secret"))!
        await #expect(throws: WebCommandFailure("song \(secret) is not in the music folders")) {
            try await f.remote.perform(.rate(secret, stars: 2), permissions: .all)
        }
        func parse(_ s: String) throws(WebRequestError) -> WebCommand { try WebCommand(json: Array(s.utf8)) }
        #expect(try parse(#"{"command":"rate","value":["\#(one)",3]}"#) == .rate(one, stars: 3))
        for bad in [#"["\#(one)",6]"#, #"["\#(one)",2.5]"#, #"["\#(one)"]"#, #"[\#(one),3]"#, #""\#(one)""#] {
            #expect(throws: WebRequestError("\"rate\" needs [SONG ID, STARS] as \"value\" (a song id as a string of digits, a whole number of stars from 0 to 5)")) {
                try parse(#"{"command":"rate","value":\#(bad)}"#)
            }
        }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"rate","value":["../x",3]}"#) }
    }

    /// The library's smart playlists on the page: listed with the stored playlists and the
    /// count of their songs in the music folders (a song outside them is not counted), their
    /// songs shown by id in the playlist's order, and pushed again when a rating or a play
    /// changes what they hold.
    @Test func smartPlaylistsAreListedShownAndFollowRatings() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let one = try UInt64(f.id("Song One"))!, two = try UInt64(f.id("Song Two"))!
        let secret = try UInt64(f.id("Secret"))!
        try f.library.setRating(5, of: secret)
        func counts() async throws -> [String: Int] {
            let smart = try await f.remote.playlists(permissions: .all).smart ?? []
            return Dictionary(uniqueKeysWithValues: smart.map { ($0.name, $0.songs) })
        }
        #expect(try await counts() == ["Recently Added": 3, "Top 25 Most Played": 0, "Top Rated": 0, "Never Played": 3])

        let page = try await f.openPage()
        defer { page.close() }
        let messages = page.messages
        // Rated from the page: Top Rated holds it, and the page is sent the new counts.
        try await f.remote.perform(.rate(two, stars: 5), permissions: .all)
        try await f.remote.perform(.rate(one, stars: 4), permissions: .all)
        _ = try await waitForEvent(messages, "the playlists pushed with Top Rated holding two songs") {
            $0.contains(#""type":"playlists""#) && $0.contains(#"{"name":"Top Rated","songs":2}"#)
        }
        let topRated = try f.remote.smartPlaylist("Top Rated", permissions: .all).songs ?? []
        #expect(topRated.map(\.id) == [String(two), String(one)], "best first: \(topRated)")
        #expect(topRated.map(\.rating) == [5, 4])
        // A play: Most Played holds it, Never Played no more.
        try f.library.recordPlay(of: one, playedSeconds: 1)
        #expect(try f.remote.smartPlaylist("Top 25 Most Played", permissions: .all).songs?.map(\.id) == [String(one)])
        #expect(try await counts()["Never Played"] == 2)
        // Added to the queue by their ids, as the page does.
        try await f.remote.perform(.add(topRated.compactMap { UInt64($0.id) }, next: false), permissions: .all)
        #expect(try await f.remote.queue(permissions: .all).songs.map(\.title) == ["Song Two", "Song One"])
        // An unknown name says which there are; without read permission, nothing.
        #expect(throws: WebLibraryError(404, "no smart playlist \"Best\" (known: Recently Added, Top 25 Most Played, Top Rated, Never Played)")) {
            try f.remote.smartPlaylist("Best", permissions: .all)
        }
        #expect(throws: WebLibraryError(403, "this session may not read the library")) { try f.remote.smartPlaylist("Top Rated", permissions: []) }
    }

    /// Cover art by library id: the picture in the song's tags; none for a song without one or
    /// outside the music folders; a path is refused.
    @Test func coversAreServedByIDNeverByPath() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let cover = try f.remote.cover(try f.id("青花瓷"), permissions: .all)
        #expect(cover.type == "image/png" && cover.data.starts(with: [0x89, 0x50, 0x4e, 0x47]))
        #expect(throws: WebLibraryError(404, "song \(try f.id("Song One")) has no cover")) { try f.remote.cover(try f.id("Song One"), permissions: .all) }
        #expect(throws: WebLibraryError(404, "song \(try f.id("Secret")) is not in the music folders")) {
            try f.remote.cover(try f.id("Secret"), permissions: .all)
        }
        #expect(throws: WebLibraryError(403, "this session may not read the library")) { try f.remote.cover(try f.id("青花瓷"), permissions: [.control]) }
        // Over HTTP: the picture, and clear errors for paths.
        let cjk = try f.id("青花瓷")
        try await f.remote.test(.live) { client in
            try await client.execute(uri: "/api/cover/\(cjk)", method: .get) { r in
                #expect(r.status == .ok && r.headers[.contentType] == "image/png" && r.body.readableBytes == cover.data.count)
            }
            for (path, decoded) in [("..%2F..%2Fetc%2Fpasswd", "../../etc/passwd"), ("%2Fetc%2Fpasswd", "/etc/passwd"), ("A%2Fone.flac", "A/one.flac")] {
                try await client.execute(uri: "/api/cover/\(path)", method: .get) { r in
                    #expect(r.status == .badRequest && String(buffer: r.body).contains(#"\"\#(decoded)\" is not a library song id"#)
                            && String(buffer: r.body).contains("the web remote takes no file paths"), "\(path): \(String(buffer: r.body))")
                }
            }
            try await client.execute(uri: "/api/cover/../../etc/passwd", method: .get) { r in #expect(r.status != .ok) }
            try await client.execute(uri: "/api/library/search?q=qinghua", method: .get) { r in
                #expect(r.status == .ok && String(buffer: r.body).contains("青花瓷") && !String(buffer: r.body).contains(".flac"))
            }
            try await client.execute(uri: "/api/library/albums?artist=%E5%91%A8%E6%9D%B0%E4%BC%A6", method: .get) { r in
                #expect(r.status == .ok && String(buffer: r.body).contains("我很忙"), "\(String(buffer: r.body))")
            }
            // A space as a page's URLSearchParams writes it.
            try await client.execute(uri: "/api/library/songs?artist=Artist+A&album=The%20Album", method: .get) { r in
                #expect(r.status == .ok && String(buffer: r.body).contains("Song Two"), "\(String(buffer: r.body))")
            }
            try await client.execute(uri: "/api/library/albums", method: .get) { r in
                #expect(r.status == .badRequest && String(buffer: r.body).contains(#"\"artist\" is missing"#), "\(String(buffer: r.body))")
            }
            try await client.execute(uri: "/api/library/albums?artist=a%0Aclear", method: .get) { r in
                #expect(r.status == .badRequest && String(buffer: r.body).contains("control character"))
            }
            try await client.execute(uri: "/api/library/files", method: .get) { r in #expect(r.status == .notFound) }
            try await client.execute(uri: "/api/command", method: .post, body: ByteBuffer(string: #"{"command":"add","value":"/etc/passwd"}"#)) { r in
                #expect(r.status == .badRequest && String(buffer: r.body).contains("the web remote takes no file paths"))
            }
        }
    }

    /// The queue's editing (clear, move, save, load) and the outputs, through the daemon; the
    /// playlists and outputs are pushed when they change.
    @Test func queuePlaylistsAndOutputsRunThroughTheDaemon() async throws {
        let f = try await Fixture()
        defer { f.dir.remove() }
        let page = try await f.openPage()
        defer { page.close() }
        let messages = page.messages
        _ = try await waitForEvent(messages, "the first outputs") { $0.contains(#""type":"outputs""#) && $0.contains(#""enabled":true"#) }

        let one = try UInt64(f.id("Song One"))!, two = try UInt64(f.id("Song Two"))!
        try await f.remote.perform(.add([one, two], next: false), permissions: .all)
        let ids = try await f.remote.queue(permissions: .all).songs.map(\.id)
        try await f.remote.perform(.moveID(ids[1], to: 0), permissions: .all)
        #expect(try await f.remote.queue(permissions: .all).songs.map(\.title) == ["Song Two", "Song One"])
        try await f.remote.perform(.save("Mix"), permissions: .all)
        _ = try await waitForEvent(messages, "the playlists pushed") { $0.contains(#""names":["Mix"]"#) && $0.hasSuffix(#""type":"playlists"}"#) }
        #expect(try await f.remote.playlists(permissions: .all).names == ["Mix"])
        try await f.remote.perform(.clear, permissions: .all)
        #expect(try await f.remote.queue(permissions: .all).songs.isEmpty)
        try await f.remote.perform(.load("Mix"), permissions: .all)
        #expect(try await f.remote.queue(permissions: .all).songs.map(\.title) == ["Song Two", "Song One"])
        await #expect(throws: WebCommandFailure.self) { try await f.remote.perform(.load("Nope"), permissions: .all) }

        let outputs = try await f.remote.outputs(permissions: .all)
        #expect(outputs.outputs == [WebOutput(id: 0, name: "default", enabled: true)])
        // The equalizer: the outputs' attribute, its presets listed; set by name, pushed.
        #expect(outputs.equalizer == "flat" && outputs.presets.first == "flat" && outputs.presets.contains("rock"), "\(outputs)")
        try await f.remote.perform(.equalizer("rock"), permissions: .all)
        _ = try await waitForEvent(messages, "the equalizer pushed") { $0.contains(#""type":"outputs""#) && $0.contains(#""equalizer":"rock""#) }
        #expect(f.daemon.player.queue.eq.globalGain == -3, "rock's global gain")
        await #expect(throws: WebCommandFailure.self) { try await f.remote.perform(.equalizer("loud"), permissions: .all) }
        #expect(try await f.remote.outputs(permissions: .all).equalizer == "rock")
        try await f.remote.perform(.output(0, enabled: false), permissions: .all)
        _ = try await waitForEvent(messages, "the outputs pushed") { $0.contains(#""type":"outputs""#) && $0.contains(#""enabled":false"#) }
        #expect(f.daemon.executeNow(Self.batch("outputs"), client: Self.client).text.contains("outputenabled: 0"))
        await #expect(throws: WebCommandFailure.self) { try await f.remote.perform(.output(7, enabled: true), permissions: .all) }
        // A change of the database (an update, the watch) tells the page to read its view again.
        f.daemon.hub.post([.database])
        _ = try await waitForEvent(messages, "the library's change pushed") { $0 == #"{"type":"library"}"# }

        func parse(_ s: String) throws(WebRequestError) -> WebCommand { try WebCommand(json: Array(s.utf8)) }
        #expect(try parse(#"{"command":"moveid","value":[3,0]}"#).mpdLine == "moveid 3 0")
        #expect(try parse(#"{"command":"save","value":"My \"mix\""}"#).mpdLine == #"save "My \"mix\"""#)
        #expect(try parse(#"{"command":"disableoutput","value":1}"#).mpdLine == "disableoutput 1")
        #expect(try parse(#"{"command":"equalizer","value":"bass-boost"}"#).mpdLine == #"outputset 0 equalizer "bass-boost""#)
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"equalizer","value":"a\nkill"}"#) }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"equalizer","value":3}"#) }
        #expect(throws: WebRequestError("\"save\": the playlist name is longer than 1,000 bytes or holds a control character")) {
            try parse(#"{"command":"save","value":"a\nclear"}"#)
        }
        #expect(throws: WebRequestError("\"load\": a playlist name may not be empty or hold \"/\"")) { try parse(#"{"command":"load","value":"../x"}"#) }
        #expect(throws: WebRequestError.self) { try parse(#"{"command":"moveid","value":[3]}"#) }
    }

    /// What is pushed is read with each page's permissions: a page that may not read gets
    /// nothing, not even the first state.
    @Test func pushesAreFilteredByThePagesPermissions() async throws {
        let daemon = Self.daemon()
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1")
        #expect(await remote.messages(for: [.player, .playlist, .output], permissions: [.control, .add]).isEmpty)
        #expect(await remote.messages(for: [.player], permissions: .read).count == 1)
        let pump = Task { await remote.pumpChanges() }
        defer { pump.cancel() }
        let (blind, blindFeed) = await remote.subscribePage(permissions: [.control])
        let (reader, readerFeed) = await remote.subscribePage(permissions: .read)
        defer { remote.unsubscribePage(reader) }
        let (messages, sink) = AsyncStream<String>.makeStream()
        let task = Task { for await m in readerFeed { sink.yield(m) }; sink.finish() }
        defer { task.cancel() }
        let hub = daemon.hub
        try await withDeadline(10, "the pump's subscription") { while hub.count == 0 { await Task.yield() } }
        #expect(daemon.executeNow(Self.batch("random 1"), client: Self.client).text == "OK\n")
        _ = try await waitForEvent(messages, "random pushed to the reading page") { $0.contains(#""random":true"#) }
        #expect(daemon.executeNow(Self.batch("random 0"), client: Self.client).text == "OK\n")
        _ = try await waitForEvent(messages, "random off pushed to the reading page") { $0.contains(#""random":false"#) }
        // Both pushes went round every page; the page that may not read got none of them.
        remote.unsubscribePage(blind)
        var blindGot: [String] = []
        for await m in blindFeed { blindGot.append(m) }
        #expect(blindGot.isEmpty, "\(blindGot)")
    }

    /// Sessions last a bounded time and are bounded in number; a page whose session expired is
    /// told so and its feed ends.
    @Test func sessionsExpireAndAreBoundedInNumber() async throws {
        var access = MPDAccess()
        try access.addPassword(parsing: "sesame@read")
        let web = WebAccess(host: "0.0.0.0", access: access, sessionLifetime: .seconds(60), maxSessions: 2)
        let t0 = ContinuousClock.now
        let a = try #require(web.login(password: "sesame", now: t0))
        #expect(web.permissions(sessionToken: a, now: t0 + .seconds(59)) == .read)
        #expect(web.permissions(sessionToken: a, now: t0 + .seconds(60)) == nil, "expired")
        #expect(!web.isValid(session: a, now: t0 + .seconds(61)))
        let b = try #require(web.login(password: "sesame", now: t0 + .seconds(1)))
        let c = try #require(web.login(password: "sesame", now: t0 + .seconds(2)))
        #expect(web.sessionCount == 2 && web.permissions(sessionToken: a, now: t0 + .seconds(3)) == nil, "the oldest made room")
        #expect(web.permissions(sessionToken: b, now: t0 + .seconds(3)) == .read && web.permissions(sessionToken: c, now: t0 + .seconds(3)) == .read)
        // Expired sessions are forgotten at the next login.
        _ = web.login(password: "sesame", now: t0 + .seconds(100))
        #expect(web.sessionCount == 1)

        var daemonAccess = MPDAccess()
        try daemonAccess.addPassword(parsing: "sesame@read,control")
        let remote = try WebRemote(daemon: Self.daemon(access: daemonAccess), host: "0.0.0.0", sessionLifetime: .seconds(60))
        let start = ContinuousClock.now
        let token = try #require(remote.access.login(password: "sesame", now: start))
        let (_, feed) = await remote.subscribePage(permissions: [.read, .control], session: token)
        remote.closeExpiredPages(now: start + .seconds(30))
        #expect(remote.pageCount == 1)
        remote.closeExpiredPages(now: start + .seconds(61))
        #expect(remote.pageCount == 0)
        var got: [String] = []
        for await m in feed { got.append(m) }
        #expect(got.last == #"{"error":"the session expired: log in again","type":"error"}"#, "\(got)")
    }
}
