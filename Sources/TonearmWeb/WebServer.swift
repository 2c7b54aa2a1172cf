// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import TonearmDaemon
import TonearmMPDLibrary
import TonearmMPDProtocol
import TonearmSession

/// Why the web remote cannot start.
public struct WebRemoteError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// The daemon's web remote (issue 21): a page, a small JSON API and a WebSocket, all driving
/// the daemon's one command layer — every action is an MPD command line carried out by
/// ``MPDDaemon/execute(_:client:completion:)`` with the page's permissions, as an MPD client's
/// would be; every state the page shows is the daemon's `status`, `currentsong` and
/// `playlistinfo` answers read into JSON (``WebAnswer``). Changes come from the daemon's
/// ``MPDIdleHub`` (whoever made them: mpc, MPRIS, another page) and are pushed to every open
/// page over its WebSocket; neither side polls.
public final class WebRemote: Sendable {
    public let daemon: MPDDaemon
    public let access: WebAccess
    /// The library (the daemon's database) when the daemon has music folders.
    let library: WebLibrary?
    /// The system volume of the sound device the daemon plays to (its PulseAudio output's
    /// default sink), nil when it has none. Not an MPD command (MPD has no system mixer): set
    /// by the page's `systemvolume`, with the `player` permission, as `setvol` needs.
    let systemVolume: SystemVolume?
    /// An open page: its feed, what it may read, and its session (nil: no login needed).
    struct Page {
        var feed: AsyncStream<String>.Continuation
        var permissions: MPDPermissions
        var session: String?
    }
    /// The pages' WebSockets: each gets every message its permissions let it read.
    private let pages = Mutex<(next: UInt64, all: [UInt64: Page])>((1, [:]))

    /// - Throws: ``WebRemoteError`` when `host` is not loopback and the daemon has no password
    ///   (nobody could log in, and nothing else may be open to the network).
    /// `library`: the daemon's database (its music folders), for the library, search and covers.
    /// `systemVolume`: the sound device's volume, when the daemon plays to PulseAudio.
    public init(daemon: MPDDaemon, host: String, library: MPDLibraryResponder? = nil, systemVolume: SystemVolume? = nil,
                sessionLifetime: Duration = WebAccess.defaultSessionLifetime, maxSessions: Int = WebAccess.defaultMaxSessions) throws(WebRemoteError) {
        self.daemon = daemon
        self.library = library.map { WebLibrary(responder: $0) }
        self.systemVolume = systemVolume
        access = WebAccess(host: host, access: daemon.access, sessionLifetime: sessionLifetime, maxSessions: maxSessions)
        if access.requiresLogin, daemon.access.passwords.isEmpty {
            throw WebRemoteError("the web remote on \(host) (not loopback) needs a password: set one with --password or [daemon] password")
        }
    }

    // MARK: The command layer

    /// Runs MPD command lines through the daemon (one command, or a command list answered with
    /// `list_OK` after each) and returns the answer's text.
    func execute(_ lines: [String], permissions: MPDPermissions) async -> String {
        let batch = MPDRequestFramer.Batch(lines: lines.map { Array($0.utf8) }, mode: lines.count == 1 ? .single : .list(ok: true))
        let client = MPDClientContext(isLocal: false, permissions: permissions)
        let result = await withCheckedContinuation { (c: CheckedContinuation<MPDBatchResult, Never>) in
            daemon.execute(batch, client: client) { c.resume(returning: $0) }
        }
        return String(decoding: result.data, as: UTF8.self)
    }

    /// Carries out one of the page's commands; throws the daemon's `ACK` line. Most are one MPD
    /// command line (``WebCommand/mpdLine``); the others have a plan of their own below.
    public func perform(_ command: WebCommand, permissions: MPDPermissions) async throws(WebCommandFailure) {
        switch command {
        case .systemVolume(let percent): try setSystemVolume(percent, permissions: permissions)
        case .onlyOutput(let id): try await playOnlyTo(output: id, permissions: permissions)
        case .rate(let id, let stars): try await rate(song: id, stars: stars, permissions: permissions)
        case .add(let ids, let next): try await add(songs: ids, next: next, permissions: permissions)
        default: _ = try WebAnswer.pairs(await execute([command.mpdLine], permissions: permissions))
        }
    }

    /// The sound server's volume (not the daemon's mixer): needs `control`, as `setvol` does.
    private func setSystemVolume(_ percent: Int, permissions: MPDPermissions) throws(WebCommandFailure) {
        guard let systemVolume else { throw WebCommandFailure("the daemon does not play to a sound server with a system volume") }
        guard permissions.contains(.player) else { throw WebCommandFailure("ACK [4@0] {setvol} you don't have permission for \"setvol\"") }
        do { try systemVolume.setVolume(Float(percent) / 100) } catch { throw WebCommandFailure("\(error)") }
    }

    /// Playback moved to one output: enabled, every other one disabled, in one command list.
    private func playOnlyTo(output id: Int, permissions: MPDPermissions) async throws(WebCommandFailure) {
        let outputs = try WebAnswer.outputs(await execute(["outputs"], permissions: permissions)).outputs
        guard outputs.contains(where: { $0.id == id }) else { throw WebCommandFailure("ACK [50@0] {enableoutput} No such audio output") }
        let lines = ["enableoutput \(id)"] + outputs.filter { $0.id != id && $0.enabled }.map { "disableoutput \($0.id)" }
        _ = try WebAnswer.pairs(await execute(lines, permissions: permissions))
    }

    /// The song's URI from its library id, then MPD's `sticker` (which needs `admin`, as MPD's does).
    private func rate(song id: UInt64, stars: Int, permissions: MPDPermissions) async throws(WebCommandFailure) {
        let uri = try songURI(id)
        _ = try WebAnswer.pairs(await execute(["sticker set song " + MPDRequest.quoted(uri) + " rating \(stars)"], permissions: permissions))
    }

    /// Library ids to the songs' URIs (the songs must be the music folders'), then one command
    /// list of `addid`s: after the current song in order (`+0`, `+1`…) for `next`.
    private func add(songs ids: [UInt64], next: Bool, permissions: MPDPermissions) async throws(WebCommandFailure) {
        guard permissions.contains(.read) else { throw WebCommandFailure("ACK [4@0] {addid} you don't have permission for \"addid\"") }
        var uris: [String] = []
        for id in ids { uris.append(try songURI(id)) }
        func lines(next: Bool) -> [String] {
            uris.enumerated().map { k, uri in "addid " + MPDRequest.quoted(uri) + (next ? " +\(k)" : "") }
        }
        let answer = await execute(lines(next: next), permissions: permissions)
        do {
            _ = try WebAnswer.pairs(answer)
        } catch where next && error.description.contains("No current song") {
            // Nothing plays: play next is the end of the queue.
            _ = try WebAnswer.pairs(await execute(lines(next: false), permissions: permissions))
        }
    }

    /// The URI of the library's song `id`; throws when there is no library or no such song.
    private func songURI(_ id: UInt64) throws(WebCommandFailure) -> String {
        guard let library else { throw WebCommandFailure("the daemon has no library (start it with --music FOLDER)") }
        do { return try library.uri(ofSong: id) } catch { throw WebCommandFailure(error.description) }
    }

    /// The player's state now (`status` and `currentsong` in one command list: one moment).
    public func state(permissions: MPDPermissions) async throws(WebCommandFailure) -> WebPlayerState {
        let answer = await execute(["status", "currentsong"], permissions: permissions)
        let parts = answer.components(separatedBy: "list_OK\n")
        guard parts.count == 3 else {
            _ = try WebAnswer.pairs(answer)
            throw WebCommandFailure("unexpected answer to status and currentsong")
        }
        var state = try WebAnswer.state(status: parts[0] + "OK\n", current: parts[1] + "OK\n")
        // The playing song's library id, for its cover.
        if state.song != nil, let library, let file = try WebAnswer.pairs(parts[1] + "OK\n").first(where: { $0.key == "file" })?.value,
           library.responder.filePath(forURI: file) != nil,
           let id = try? library.library.persistentIDs(forPaths: [library.responder.folders.path(forURI: file)]).values.first {
            state.song?.cover = String(id)
        }
        // A stream's parts in memory (not an MPD answer: MPD's clients are not told).
        if state.song != nil, state.duration != nil {
            let loaded = daemon.player.loadedTimeRanges
            if !loaded.isEmpty {
                state.buffered = loaded.map { [($0.start * 10).rounded() / 10, ($0.end * 10).rounded() / 10] }
            }
        }
        return state
    }

    public func outputs(permissions: MPDPermissions) async throws(WebCommandFailure) -> WebOutputs {
        var outputs = try WebAnswer.outputs(await execute(["outputs"], permissions: permissions))
        if outputs.equalizer != nil { outputs.presets = daemon.equalizerPresets }
        if let state = try? systemVolume?.state() {
            outputs.systemVolume = Int((state.volume * 100).rounded())
            outputs.systemMuted = state.isMuted
        }
        return outputs
    }

    /// The stored playlists, and the library's smart playlists with their songs' counts (for a
    /// page that may read the library).
    public func playlists(permissions: MPDPermissions) async throws(WebCommandFailure) -> WebPlaylists {
        var playlists = try WebAnswer.playlists(await execute(["listplaylists"], permissions: permissions))
        if let library, permissions.contains(.read) {
            do { playlists.smart = try library.smartPlaylists().map { WebSmartPlaylist(name: $0.name, songs: $0.songs.count) } } catch {
                throw WebCommandFailure(error.description)
            }
        }
        return playlists
    }

    // MARK: The library

    func requireLibrary(_ permissions: MPDPermissions) throws(WebLibraryError) -> WebLibrary {
        guard let library else { throw WebLibraryError(404, "the daemon has no library (start it with --music FOLDER)") }
        guard permissions.contains(.read) else { throw WebLibraryError(403, "this session may not read the library") }
        return library
    }

    /// The database's answer to one command line (its ACK as a 403 for a permission, else 400).
    func database(_ line: String, permissions: MPDPermissions) async throws(WebLibraryError) -> [(key: String, value: String)] {
        do { return try WebAnswer.pairs(await execute([line], permissions: permissions)) } catch {
            throw WebLibraryError(error.description.hasPrefix("ACK [4@") ? 403 : 400, error.description)
        }
    }

    /// The artists (MPD's `list albumartist`: the album artist, else the artist), sorted.
    public func artists(permissions: MPDPermissions) async throws(WebLibraryError) -> WebLibraryList {
        _ = try requireLibrary(permissions)
        let names = try await database("list albumartist", permissions: permissions).compactMap { $0.value.isEmpty ? nil : $0.value }
        return WebLibraryList(type: "artists", artists: names)
    }

    /// The albums of `artist` (by name), each with its first song for its cover.
    public func albums(artist: String, permissions: MPDPermissions) async throws(WebLibraryError) -> WebLibraryList {
        let library = try requireLibrary(permissions)
        let found = WebAnswer.databaseSongs(try await database("find albumartist " + MPDRequest.quoted(artist), permissions: permissions))
        var byAlbum: [String: (first: WebLibrarySong, key: (Int, Int), count: Int)] = [:]
        for (s, tags) in try library.identified(found) {
            let key = (WebAnswer.number(tags["Disc"]), WebAnswer.number(tags["Track"]))
            if let a = byAlbum[s.album] {
                byAlbum[s.album] = (key < a.key ? s : a.first, key < a.key ? key : a.key, a.count + 1)
            } else {
                byAlbum[s.album] = (s, key, 1)
            }
        }
        let albums = byAlbum.sorted { $0.key < $1.key }.map { name, a in
            WebLibraryAlbum(name: name, artist: artist, songs: a.count, cover: a.first.id)
        }
        return WebLibraryList(type: "albums", albums: albums)
    }

    /// The songs of `album` by `artist`, in disc and track order.
    public func songs(artist: String, album: String, permissions: MPDPermissions) async throws(WebLibraryError) -> WebLibraryList {
        let library = try requireLibrary(permissions)
        let line = "find albumartist " + MPDRequest.quoted(artist) + " album " + MPDRequest.quoted(album)
        let found = WebAnswer.databaseSongs(try await database(line, permissions: permissions)).enumerated().sorted { a, b in
            let ka = (WebAnswer.number(a.element.tags["Disc"]), WebAnswer.number(a.element.tags["Track"]), a.offset)
            let kb = (WebAnswer.number(b.element.tags["Disc"]), WebAnswer.number(b.element.tags["Track"]), b.offset)
            return ka < kb
        }.map(\.element)
        return WebLibraryList(type: "songs", songs: try library.songs(found))
    }

    /// The library's full-text search (the terminal's: CJK, pinyin), in the music folders.
    public func search(_ text: String, permissions: MPDPermissions) throws(WebLibraryError) -> WebLibraryList {
        let library = try requireLibrary(permissions)
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return WebLibraryList(type: "search", songs: trimmed.isEmpty ? [] : try library.search(trimmed))
    }

    /// The songs of the library's smart playlist `name`, in its order.
    public func smartPlaylist(_ name: String, permissions: MPDPermissions) throws(WebLibraryError) -> WebLibraryList {
        WebLibraryList(type: "songs", songs: try requireLibrary(permissions).smartPlaylist(named: name))
    }

    /// The cover of the library's song `id` (given as the page sends it: digits only).
    public func cover(_ idText: String, permissions: MPDPermissions) throws(WebLibraryError) -> (data: [UInt8], type: String) {
        let id: UInt64
        do { id = try WebCommand.libraryID(idText, command: "cover") } catch { throw WebLibraryError(400, error.description) }
        return try requireLibrary(permissions).cover(ofSong: id)
    }

    public func queue(permissions: MPDPermissions) async throws(WebCommandFailure) -> WebQueue {
        try WebAnswer.queue(await execute(["playlistinfo"], permissions: permissions))
    }

    // MARK: Live updates

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }

    static func errorJSON(_ message: String) -> String { json(["type": "error", "error": message]) }

    /// A page's feed: its first messages (the state, the queue, the outputs and the playlists
    /// now), then every push its permissions let it read. `session`: the page's login (its feed
    /// ends when the session expires).
    func subscribePage(permissions: MPDPermissions, session: String? = nil) async -> (id: UInt64, stream: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let id = pages.withLock { p in
            let id = p.next
            p.next += 1
            p.all[id] = Page(feed: continuation, permissions: permissions, session: session)
            return id
        }
        for m in await messages(for: [.playlist, .player, .output, .storedPlaylist], permissions: permissions) { continuation.yield(m) }
        return (id, stream)
    }

    func unsubscribePage(_ id: UInt64) {
        pages.withLock { $0.all.removeValue(forKey: id) }?.feed.finish()
    }

    /// The messages for what changed, read with `permissions`: the queue when the queue did, the
    /// state for anything the page shows, the outputs, the stored playlists, a note that the
    /// library changed. A page that may not read gets nothing (MPD's `read` permission covers
    /// all of it).
    func messages(for changed: Set<MPDSubsystem>, permissions: MPDPermissions) async -> [String] {
        guard permissions.contains(.read) else { return [] }
        var out: [String] = []
        do {
            if changed.contains(.playlist) { out.append(Self.json(try await queue(permissions: permissions))) }
            if !changed.isDisjoint(with: [.playlist, .player, .mixer, .options]) {
                out.append(Self.json(try await state(permissions: permissions)))
            }
            if changed.contains(.output) { out.append(Self.json(try await outputs(permissions: permissions))) }
            // The stored playlists changed, or what the smart ones hold (songs, ratings, plays).
            if library != nil, !changed.isDisjoint(with: [.storedPlaylist, .database, .sticker]) {
                out.append(Self.json(try await playlists(permissions: permissions)))
            }
            // The library's songs changed, or their ratings or play counts (stickers).
            if !changed.isDisjoint(with: [.database, .sticker]) { out.append(#"{"type":"library"}"#) }
        } catch {
            out.append(Self.errorJSON("\(error)"))
        }
        return out
    }

    /// Until cancelled: each change the daemon posts is read once for each set of permissions
    /// the open pages have (most often one), and pushed to the pages with those permissions: a
    /// page gets only what its session may read. A page whose session expired is told so and its
    /// feed ends. Changes posted while one is being read are gathered and read together after it
    /// (a burst of changes is one read, not many).
    func pumpChanges() async {
        let pending = PendingChanges()
        let (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // The system volume changed (this page, a desktop mixer, pactl): the outputs are read
        // again for the pages (not an MPD event: MPD's clients are not told). Subscribed before
        // the hub is, so a change made once the pump is subscribed to the hub is seen; no
        // sound server now: no system volume is followed.
        let volumeChanges = systemVolume.flatMap { try? $0.changes }
        let volumeWatch = volumeChanges.map { changes in
            Task {
                for await _ in changes {
                    pending.set.withLock { _ = $0.insert(.output) }
                    continuation.yield()
                }
            }
        }
        defer { volumeWatch?.cancel() }
        // More of the playing stream arrived: the state (its buffered part) is read again.
        let loadedChanges = daemon.player.loadedTimeRangeChanges
        let loadedWatch = Task {
            for await _ in loadedChanges {
                pending.set.withLock { _ = $0.insert(.player) }
                continuation.yield()
            }
        }
        defer { loadedWatch.cancel() }
        // Called on the daemon's command queue: only notes the change.
        let id = daemon.hub.subscribe { changed in
            pending.set.withLock { $0.formUnion(changed) }
            continuation.yield()
        }
        defer { daemon.hub.unsubscribe(id) }
        for await _ in signals {
            let changed = pending.set.withLock { p in
                defer { p.removeAll() }
                return p
            }
            guard !changed.isEmpty, pageCount > 0 else { continue }
            closeExpiredPages()
            let open = pages.withLock { Array($0.all.values) }
            var read: [MPDPermissions: [String]] = [:]
            for page in open {
                if read[page.permissions] == nil { read[page.permissions] = await messages(for: changed, permissions: page.permissions) }
                for m in read[page.permissions] ?? [] { page.feed.yield(m) }
            }
        }
    }

    /// Ends the feeds of pages whose session is no longer valid (expired, or pushed out by newer
    /// ones), after telling them.
    func closeExpiredPages(now: ContinuousClock.Instant = .now) {
        let expired = pages.withLock { p in
            let ids = p.all.filter { $0.value.session.map { !access.isValid(session: $0, now: now) } ?? false }.map(\.key)
            return ids.compactMap { p.all.removeValue(forKey: $0) }
        }
        for page in expired {
            page.feed.yield(Self.errorJSON("the session expired: log in again"))
            page.feed.finish()
        }
    }

    func finishPages() {
        let feeds = pages.withLock { p in
            defer { p.all.removeAll() }
            return p.all.values.map(\.feed)
        }
        for f in feeds { f.finish() }
    }

    public var pageCount: Int { pages.withLock { $0.all.count } }

    // MARK: HTTP

    static func response(_ status: HTTPResponse.Status, type: String, body: String, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [
            .contentType: type,
            .cacheControl: "no-store",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Content-Security-Policy")!: "default-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
        ]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    static func jsonResponse(_ status: HTTPResponse.Status, _ body: String) -> Response {
        response(status, type: "application/json; charset=utf-8", body: body)
    }

    static func host(of head: HTTPRequest) -> String? { head.authority }

    func session(_ head: HTTPRequest) -> String? {
        Cookies(from: head.headerFields[values: .cookie])[WebAccess.cookieName]?.value
    }

    func permissions(_ head: HTTPRequest) -> MPDPermissions? { access.permissions(sessionToken: session(head)) }

    /// The router: the page and its assets, the login, the JSON API.
    func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/") { request, _ -> Response in
            guard self.permissions(request.head) != nil else {
                return Self.response(.seeOther, type: "text/plain", body: "", headers: [.location: "/login"])
            }
            return Self.response(.ok, type: "text/html; charset=utf-8", body: WebPage.html)
        }
        router.get("/app.js") { _, _ in Self.response(.ok, type: "text/javascript; charset=utf-8", body: WebPage.script) }
        router.get("/app.css") { _, _ in Self.response(.ok, type: "text/css; charset=utf-8", body: WebPage.style) }
        router.get("/login") { _, _ in Self.response(.ok, type: "text/html; charset=utf-8", body: WebPage.login(failed: false)) }
        router.post("/login") { request, _ -> Response in
            guard WebAccess.originAllowed(origin: request.headers[.origin], host: Self.host(of: request.head)) else {
                return Self.response(.forbidden, type: "text/plain; charset=utf-8", body: "Forbidden: the request came from another site's page.\n")
            }
            let body = try await request.body.collect(upTo: 4096)
            let password = WebForm.value(of: "password", in: String(buffer: body)) ?? ""
            guard let token = self.access.login(password: password) else {
                return Self.response(.unauthorized, type: "text/html; charset=utf-8", body: WebPage.login(failed: true))
            }
            var r = Self.response(.seeOther, type: "text/plain", body: "", headers: [.location: "/"])
            r.setCookie(Cookie(name: WebAccess.cookieName, value: token, maxAge: Int(self.access.sessionLifetime.components.seconds), path: "/",
                               httpOnly: true, sameSite: .strict))
            return r
        }
        router.get("/api/state") { request, _ -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            do { return Self.jsonResponse(.ok, Self.json(try await self.state(permissions: p))) } catch {
                return Self.jsonResponse(.forbidden, Self.errorJSON("\(error)"))
            }
        }
        router.get("/api/queue") { request, _ -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            do { return Self.jsonResponse(.ok, Self.json(try await self.queue(permissions: p))) } catch {
                return Self.jsonResponse(.forbidden, Self.errorJSON("\(error)"))
            }
        }
        router.post("/api/command") { request, _ -> Response in
            guard WebAccess.originAllowed(origin: request.headers[.origin], host: Self.host(of: request.head)) else {
                return Self.jsonResponse(.forbidden, Self.errorJSON("the request came from another site's page (Origin \(request.headers[.origin] ?? ""))"))
            }
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: Self.maxCommandBody) } catch {
                return Self.jsonResponse(.contentTooLarge, Self.errorJSON("the body is larger than \(Self.maxCommandBody) bytes"))
            }
            let command: WebCommand
            do { command = try WebCommand(json: Array(buffer: body)) } catch {
                return Self.jsonResponse(.badRequest, Self.errorJSON("\(error)"))
            }
            do { try await self.perform(command, permissions: p) } catch {
                return Self.jsonResponse(.conflict, Self.errorJSON("\(error)"))
            }
            return Self.jsonResponse(.ok, "{\"ok\":true}")
        }
        router.get("/api/outputs") { request, _ -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            do { return Self.jsonResponse(.ok, Self.json(try await self.outputs(permissions: p))) } catch {
                return Self.jsonResponse(.forbidden, Self.errorJSON("\(error)"))
            }
        }
        router.get("/api/playlists") { request, _ -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            do { return Self.jsonResponse(.ok, Self.json(try await self.playlists(permissions: p))) } catch {
                return Self.jsonResponse(.forbidden, Self.errorJSON("\(error)"))
            }
        }
        // The library: names in the query (`?artist=…&album=…`, `?q=…`), songs by id.
        router.get("/api/library/:view") { request, context -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            // Form-encoded, as a page's URLSearchParams writes it (`+` for a space).
            let query = request.uri.query ?? ""
            func name(_ key: String) throws(WebLibraryError) -> String {
                guard let v = WebForm.value(of: key, in: query) else { throw WebLibraryError(400, "\"\(key)\" is missing from the query") }
                do { return try WebCommand.checkedName(String(v), what: "\"\(key)\"") } catch { throw WebLibraryError(400, error.description) }
            }
            do {
                let list: WebLibraryList
                switch context.parameters.get("view") {
                case "artists": list = try await self.artists(permissions: p)
                case "albums": list = try await self.albums(artist: try name("artist"), permissions: p)
                case "songs": list = try await self.songs(artist: try name("artist"), album: try name("album"), permissions: p)
                case "search": list = try self.search(try name("q"), permissions: p)
                case "smart": list = try self.smartPlaylist(try name("name"), permissions: p)
                default: throw WebLibraryError(404, "no such library view (known: artists, albums, songs, search, smart)")
                }
                return Self.jsonResponse(.ok, Self.json(list))
            } catch let error as WebLibraryError {
                return Self.jsonResponse(HTTPResponse.Status(code: error.status), Self.errorJSON(error.description))
            } catch {
                return Self.jsonResponse(.internalServerError, Self.errorJSON("\(error)"))
            }
        }
        // Cover art by the library's song id, never by path.
        router.get("/api/cover/:id") { request, context -> Response in
            guard let p = self.permissions(request.head) else { return Self.jsonResponse(.unauthorized, Self.errorJSON("log in first (POST /login)")) }
            do {
                let raw = context.parameters.get("id") ?? ""
                let cover = try self.cover(raw.removingPercentEncoding ?? raw, permissions: p)
                return Response(status: .ok, headers: [.contentType: cover.type, .cacheControl: "private, max-age=3600",
                                                       HTTPField.Name("X-Content-Type-Options")!: "nosniff"],
                                body: ResponseBody(byteBuffer: ByteBuffer(bytes: cover.data)))
            } catch let error as WebLibraryError {
                return Self.jsonResponse(HTTPResponse.Status(code: error.status), Self.errorJSON(error.description))
            } catch {
                return Self.jsonResponse(.internalServerError, Self.errorJSON("\(error)"))
            }
        }
        return router
    }

    /// The largest body of `POST /api/command` (a list of 10,000 song ids fits).
    static let maxCommandBody = 1 << 18

    /// Whether a WebSocket upgrade may go ahead: `/ws`, the page's own origin, a session.
    func upgradePermissions(_ head: HTTPRequest) -> MPDPermissions? {
        guard head.path?.split(separator: "?").first == "/ws",
              WebAccess.originAllowed(origin: head.headerFields[.origin], host: Self.host(of: head)) else { return nil }
        return permissions(head)
    }

    /// The page's session when it has a valid one (its feed ends when it expires).
    func validSession(_ head: HTTPRequest) -> String? {
        session(head).flatMap { access.isValid(session: $0) ? $0 : nil }
    }

    /// The server as a service: listens on `host:port` until graceful shutdown; `onListening`
    /// is told the address it listens on (the port when `port` is 0).
    public func service(host: String, port: Int, logger: Logger, onListening: @escaping @Sendable (String) -> Void = { _ in }) -> any Service {
        WebRemoteService(remote: self, app: application(host: host, port: port, logger: logger, onListening: onListening))
    }

    /// The Hummingbird application alone (without the pump of the daemon's changes).
    public func application(host: String, port: Int, logger: Logger,
                            onListening: @escaping @Sendable (String) -> Void = { _ in }) -> Application<RouterResponder<BasicRequestContext>> {
        Application(
            router: router(),
            server: .http1WebSocketUpgrade { head, _, _ in
                guard let permissions = self.upgradePermissions(head) else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    let (id, feed) = await self.subscribePage(permissions: permissions, session: self.validSession(head))
                    defer { self.unsubscribePage(id) }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        // The page sends nothing that matters; its close ends the feed.
                        group.addTask { for try await _ in inbound.messages(maxSize: 1 << 14) {} }
                        group.addTask { for await m in feed { try await outbound.write(.text(m)) } }
                        try await group.next()
                        group.cancelAll()
                    }
                }
            },
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "Tonearm"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                onListening(host.contains(":") ? "[\(host)]:\(bound)" : "\(host):\(bound)")
            },
            logger: logger
        )
    }
}

/// The Hummingbird application and the pump of the daemon's changes, run together.
struct WebRemoteService: Service {
    let remote: WebRemote
    let app: Application<RouterResponder<BasicRequestContext>>

    func run() async throws {
        let pump = Task { await remote.pumpChanges() }
        defer {
            pump.cancel()
            remote.finishPages()
        }
        try await app.run()
    }
}

/// `application/x-www-form-urlencoded` bodies (the login form).
enum WebForm {
    static func value(of name: String, in body: String) -> String? {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, decode(parts[0]) == name else { continue }
            return decode(parts[1])
        }
        return nil
    }

    static func decode(_ s: Substring) -> String? {
        s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

/// The changes a web remote's pump has yet to read (shared with the tasks that note them).
final class PendingChanges: Sendable {
    let set = Mutex<Set<MPDSubsystem>>([])
}
