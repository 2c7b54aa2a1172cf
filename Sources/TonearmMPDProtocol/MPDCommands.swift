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
    ]

    /// Every command, by name.
    public static let all: [MPDCommandSpec] = counts
        .flatMap { c in c.2.map { MPDCommandSpec(name: $0, minArguments: c.0, maxArguments: c.1) } }
        .sorted { $0.name < $1.name }

    private static let byName: [String: MPDCommandSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The command named `name` (as sent: names are lowercase), or nil.
    public static func spec(_ name: String) -> MPDCommandSpec? { byName[name] }

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
