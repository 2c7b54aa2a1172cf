// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Testing
import TonearmDaemon
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
            OK

            """
        let songs = WebAnswer.songs(try WebAnswer.pairs(answer))
        #expect(songs == [WebSong(id: 7, pos: 0, title: "青花瓷", artist: "周杰伦", album: "我很忙", duration: 239.5),
                          WebSong(id: 8, pos: 1, title: "02 Untitled", artist: "", album: "", duration: nil)])
        #expect(throws: WebCommandFailure("ACK [50@0] {playid} No such song")) { try WebAnswer.pairs("ACK [50@0] {playid} No such song\n") }
        #expect(throws: WebCommandFailure.self) { try WebAnswer.pairs("state: play\n") }
    }

    @Test func commandsAreReadWithClearErrors() throws {
        func parse(_ s: String) throws(WebRequestError) -> WebCommand { try WebCommand(json: Array(s.utf8)) }
        #expect(try parse(#"{"command":"next"}"#) == .next)
        #expect(try parse(#"{"command":"seek","value":42.5}"#).mpdLine == "seekcur 42.500")
        #expect(try parse(#"{"command":"volume","value":55}"#).mpdLine == "setvol 55")
        #expect(try parse(#"{"command":"random","value":true}"#).mpdLine == "random 1")
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
        let pump = Task { await remote.pumpChanges() }
        defer { pump.cancel() }
        let (id, feed) = await remote.subscribePage(permissions: .all)
        defer { remote.unsubscribePage(id) }
        let (messages, sink) = AsyncStream<String>.makeStream()
        let reader = Task { for await m in feed { sink.yield(m) }; sink.finish() }
        defer { reader.cancel() }
        // First the queue and the state as they are.
        _ = try await waitForEvent(messages, "the first state") { $0.contains(#""type":"state""#) && $0.contains(#""random":false"#) }
        // Wait until the pump listens: its subscription is the hub's only one.
        let pages = daemon.hub
        try await withDeadline(10, "the pump's subscription") { while pages.count == 0 { await Task.yield() } }
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
            #expect(cookie.hasPrefix(WebAccess.cookieName + "=") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
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
        for name in ["Play", "Previous", "Next", "Seek", "Volume", "Repeat", "Shuffle"] {
            #expect(WebPage.html.contains("aria-label=\"\(name)\""), "\(name)")
        }
    }
}
