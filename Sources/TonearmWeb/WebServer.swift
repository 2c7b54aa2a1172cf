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
import TonearmMPDProtocol

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
    /// The pages' WebSockets: each gets every message pushed.
    private let pages = Mutex<(next: UInt64, all: [UInt64: AsyncStream<String>.Continuation])>((1, [:]))

    /// - Throws: ``WebRemoteError`` when `host` is not loopback and the daemon has no password
    ///   (nobody could log in, and nothing else may be open to the network).
    public init(daemon: MPDDaemon, host: String) throws(WebRemoteError) {
        self.daemon = daemon
        access = WebAccess(host: host, access: daemon.access)
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

    /// Carries out one of the page's commands; throws the daemon's `ACK` line.
    public func perform(_ command: WebCommand, permissions: MPDPermissions) async throws(WebCommandFailure) {
        let answer = await execute([command.mpdLine], permissions: permissions)
        _ = try WebAnswer.pairs(answer)
    }

    /// The player's state now (`status` and `currentsong` in one command list: one moment).
    public func state(permissions: MPDPermissions) async throws(WebCommandFailure) -> WebPlayerState {
        let answer = await execute(["status", "currentsong"], permissions: permissions)
        let parts = answer.components(separatedBy: "list_OK\n")
        guard parts.count == 3 else {
            _ = try WebAnswer.pairs(answer)
            throw WebCommandFailure("unexpected answer to status and currentsong")
        }
        return try WebAnswer.state(status: parts[0] + "OK\n", current: parts[1] + "OK\n")
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

    /// A page's feed: its first messages (the state and the queue now), then every push.
    func subscribePage(permissions: MPDPermissions) async -> (id: UInt64, stream: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(32))
        let id = pages.withLock { p in
            let id = p.next
            p.next += 1
            p.all[id] = continuation
            return id
        }
        for m in await messages(for: [.playlist, .player], permissions: permissions) { continuation.yield(m) }
        return (id, stream)
    }

    func unsubscribePage(_ id: UInt64) {
        pages.withLock { $0.all.removeValue(forKey: id) }?.finish()
    }

    /// The messages for what changed: the queue when the queue did, the state for anything
    /// the page shows.
    func messages(for changed: Set<MPDSubsystem>, permissions: MPDPermissions) async -> [String] {
        var out: [String] = []
        do {
            if changed.contains(.playlist) { out.append(Self.json(try await queue(permissions: permissions))) }
            if !changed.isDisjoint(with: [.playlist, .player, .mixer, .options]) {
                out.append(Self.json(try await state(permissions: permissions)))
            }
        } catch {
            out.append(Self.errorJSON("\(error)"))
        }
        return out
    }

    /// Until cancelled: each change the daemon posts is read once (with all permissions: what
    /// any page may see) and pushed to every page. Changes posted while one is being read are
    /// gathered and read together after it (a burst of changes is one read, not many).
    func pumpChanges() async {
        let pending = Mutex<Set<MPDSubsystem>>([])
        let (signals, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Called on the daemon's command queue: only notes the change.
        let id = daemon.hub.subscribe { changed in
            pending.withLock { $0.formUnion(changed) }
            continuation.yield()
        }
        defer { daemon.hub.unsubscribe(id) }
        for await _ in signals {
            let changed = pending.withLock { p in
                defer { p.removeAll() }
                return p
            }
            guard !changed.isEmpty, pageCount > 0 else { continue }
            let messages = await messages(for: changed, permissions: .all)
            let feeds = pages.withLock { Array($0.all.values) }
            for f in feeds { for m in messages { f.yield(m) } }
        }
    }

    func finishPages() {
        let feeds = pages.withLock { p in
            defer { p.all.removeAll() }
            return Array(p.all.values)
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
            r.setCookie(Cookie(name: WebAccess.cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
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
            do { body = try await request.body.collect(upTo: 4096) } catch {
                return Self.jsonResponse(.contentTooLarge, Self.errorJSON("the body is larger than 4096 bytes"))
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
        return router
    }

    /// Whether a WebSocket upgrade may go ahead: `/ws`, the page's own origin, a session.
    func upgradePermissions(_ head: HTTPRequest) -> MPDPermissions? {
        guard head.path?.split(separator: "?").first == "/ws",
              WebAccess.originAllowed(origin: head.headerFields[.origin], host: Self.host(of: head)) else { return nil }
        return permissions(head)
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
                    let (id, feed) = await self.subscribePage(permissions: permissions)
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
