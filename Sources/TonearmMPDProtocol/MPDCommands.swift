// SPDX-License-Identifier: GPL-3.0-or-later

/// A command of MPD 0.23's protocol and how many arguments it takes.
public struct MPDCommandSpec: Sendable, Hashable {
    public let name: String
    public let minArguments: Int
    /// nil: no upper bound.
    public let maxArguments: Int?
}

/// The commands MPD 0.23 answers to (`commands` on a connection with every permission — a local
/// socket's, which has `kill` and `config` too — in its order: by name) with their argument counts, and the count check MPD makes before a command
/// runs, with its messages. `MPDPeerParseTests` compares both with a real MPD: the names with its
/// `commands`, the checks by sending each command too few and too many arguments.
public enum MPDCommands {
    /// (least, most — nil for no bound, names).
    private static let counts: [(Int, Int?, [String])] = [
        (0, 0, [
            "channels", "clear", "clearerror", "commands", "config", "currentsong", "decoders", "getvol",
            "listmounts", "listpartitions", "listplaylists", "next", "notcommands", "outputs", "ping",
            "playlist", "previous", "readmessages", "replay_gain_status", "stats", "status", "stop",
            "urlhandlers"]),
        (0, 1, [
            "listall", "listallinfo", "listfiles", "lsinfo", "pause", "play", "playid", "playlistid",
            "playlistinfo", "rescan", "shuffle", "update"]),
        (0, nil, [
            "close", "idle", "kill", "tagtypes"]),
        (1, 1, [
            "binarylimit", "consume", "crossfade", "delete", "deleteid", "delpartition", "disableoutput",
            "enableoutput", "getfingerprint", "listplaylist", "listplaylistinfo", "mixrampdb", "mixrampdelay",
            "moveoutput", "newpartition", "partition", "password", "playlistclear", "random", "readcomments",
            "repeat", "replay_gain_mode", "rm", "save", "seekcur", "setvol", "single", "subscribe",
            "toggleoutput", "unmount", "unsubscribe", "volume"]),
        (1, 2, [
            "add", "addid", "cleartagid", "plchanges", "plchangesposid"]),
        (1, 3, [
            "load"]),
        (1, nil, [
            "count", "find", "findadd", "list", "playlistfind", "playlistsearch", "search", "searchadd"]),
        (2, 2, [
            "albumart", "mount", "move", "moveid", "playlistdelete", "rangeid", "readpicture", "rename", "seek",
            "seekid", "sendmessage", "swap", "swapid"]),
        (2, 3, [
            "playlistadd"]),
        (2, nil, [
            "prio", "prioid", "searchaddpl"]),
        (3, 3, [
            "addtagid", "outputset", "playlistmove"]),
        (3, nil, [
            "sticker"]),
    ]

    /// Every command, by name.
    public static let all: [MPDCommandSpec] = counts
        .flatMap { c in c.2.map { MPDCommandSpec(name: $0, minArguments: c.0, maxArguments: c.1) } }
        .sorted { $0.name < $1.name }

    private static let byName: [String: MPDCommandSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The command named `name` (as sent: names are lowercase), or nil.
    public static func spec(_ name: String) -> MPDCommandSpec? { byName[name] }

    /// The permission each command needs (MPD 0.23's command table); absent: none.
    private static let permissionNeeded: [String: MPDPermissions] = {
        var d: [String: MPDPermissions] = [:]
        let table: [(MPDPermissions, [String])] = [
            (.read, [
                "albumart", "channels", "count", "currentsong", "decoders", "find", "getfingerprint", "getvol", "idle", "list",
                "listall", "listallinfo", "listfiles", "listmounts", "listneighbors", "listpartitions", "listplaylist",
                "listplaylistinfo", "listplaylists", "lsinfo", "outputs", "partition", "playlist", "playlistfind", "playlistid",
                "playlistinfo", "playlistsearch", "plchanges", "plchangesposid", "readcomments", "readmessages", "readpicture",
                "replay_gain_status", "search", "stats", "status", "subscribe", "unsubscribe", "urlhandlers"]),
            (.add, ["add", "addid", "addtagid", "cleartagid", "findadd", "load", "rangeid", "searchadd"]),
            (.player, [
                "clear", "clearerror", "consume", "crossfade", "delete", "deleteid", "mixrampdb", "mixrampdelay", "move", "moveid",
                "next", "pause", "play", "playid", "previous", "prio", "prioid", "random", "repeat", "replay_gain_mode", "seek",
                "seekcur", "seekid", "setvol", "shuffle", "single", "stop", "swap", "swapid", "volume"]),
            (.control, [
                "playlistadd", "playlistclear", "playlistdelete", "playlistmove", "rename", "rescan", "rm", "save", "searchaddpl",
                "sendmessage", "update"]),
            (.admin, [
                "config", "delpartition", "disableoutput", "enableoutput", "kill", "mount", "moveoutput", "newpartition",
                "outputset", "sticker", "toggleoutput", "unmount"]),
        ]
        for (p, names) in table { for n in names { d[n] = p } }
        return d
    }()

    /// The permission `name` needs (empty: none — `ping`, `password`, `commands`, …).
    public static func permission(for name: String) -> MPDPermissions { permissionNeeded[name] ?? [] }

    /// Whether a connection with `permissions` may run `name`.
    public static func allows(_ name: String, _ permissions: MPDPermissions) -> Bool {
        permissions.isSuperset(of: permission(for: name))
    }

    /// ``check(_:)`` for a connection with `permissions`, in MPD's order: an unknown command,
    /// then `ACK [4@0] {x} you don't have permission for "x"`, then the argument count.
    public static func check(_ request: MPDRequest, permissions: MPDPermissions) throws(MPDAck) -> MPDCommandSpec {
        if byName[request.command] != nil, !allows(request.command, permissions) {
            throw MPDAck(.permission, "you don't have permission for \"\(request.command)\"", command: request.command)
        }
        return try check(request)
    }

    /// The command `request` names, when it exists and has an allowed number of arguments.
    /// - Throws: ``MPDAck``: `ACK [5@0] {} unknown command "x"`, or `ACK [2@0] {x}` "wrong
    ///   number of arguments for \"x\"" (a command with a fixed count), "too few arguments for
    ///   \"x\"" or "too many arguments for \"x\"" — MPD's words.
    public static func check(_ request: MPDRequest) throws(MPDAck) -> MPDCommandSpec {
        guard let spec = byName[request.command] else {
            throw MPDAck(.unknown, "unknown command \"\(request.command)\"")
        }
        let n = request.arguments.count
        func fail(_ what: String) -> MPDAck {
            MPDAck(.argument, "\(what) arguments for \"\(spec.name)\"", command: spec.name)
        }
        if spec.minArguments == spec.maxArguments, n != spec.minArguments { throw fail("wrong number of") }
        if n < spec.minArguments { throw fail("too few") }
        if let most = spec.maxArguments, n > most { throw fail("too many") }
        return spec
    }
}
