// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TOMLKit
import Tonearm
import TonearmConfig
import TonearmDaemon
import TonearmMPDProtocol

/// The settings a config file (`config.toml`) holds, checked: every value has the right type
/// and range, and every key is one the settings have. What a file leaves out is nil; the
/// command line's flags win over what is here (``EffectiveSettings``).
///
/// ```toml
/// [playback]
/// output = "pulse"          # pulse | null | null:untimed | file:PATH.wav
/// device = "alsa_output.usb-DAC.analog-stereo"
/// volume = 70               # 0–100
/// eq = "rock"               # a preset, or bands as FREQ:GAIN,…
/// replaygain = "album"      # off | track | album
/// preamp = -3.0             # dB, -20…20
/// crossfade = 2.5           # seconds, 0…30
/// repeat = "all"            # off | one | all
/// shuffle = false
///
/// [keys]                    # action = key, or [keys]
/// quit = ["q", "Q"]
///
/// [library]
/// database = "~/music/library.sqlite"
/// folders = ["~/Music"]
///
/// [daemon]                  # `tonearm daemon`; its flags win
/// music = ["~/Music"]       # the database; the first is MPD's music folder
/// listen = ["127.0.0.1:6600"]   # TCP; [] for none (the Unix socket is always there)
/// outputs = ["pulse"]       # pulse | null | snapcast:FIFO | http:ADDR:PORT, several
/// password = ["secret@read,add,control,admin"]
/// default_permissions = "read"
/// local_permissions = "read,add,control,admin"
/// mix = false               # true: play along with other Tonearm players
/// http = "127.0.0.1:6680"   # the web remote (true: 127.0.0.1:6680; false: off)
/// ```
///
/// Paths may start with `~/`; relative paths are taken from the config file's folder.
struct ConfigFile: Sendable {
    /// The `[playback]` table: how `play` and `pick` play unless a flag says otherwise.
    struct Playback: Sendable {
        var output: OutputSelection?
        var device: String?
        /// 0–100.
        var volume: Int?
        var eq: EQChoice?
        var replayGain: ReplayGainMode?
        /// dB.
        var preamp: Double?
        /// Seconds.
        var crossfade: Double?
        var repeatMode: RepeatMode?
        var shuffle: Bool?
    }

    /// The `[library]` table.
    struct Library: Sendable {
        /// The media library's database (absolute).
        var database: String?
        /// The music folders (absolute).
        var folders: [String]?
    }

    /// The `[daemon]` table: `tonearm daemon`'s settings, as MPD's `mpd.conf` has them.
    struct Daemon: Sendable {
        /// The music folders (absolute), the database: the first is MPD's music folder, the
        /// others top-level folders of it (`--music`).
        var music: [String]?
        /// TCP addresses (`--listen`); empty: none (the Unix socket is always there).
        var listen: [MPDListenAddress]?
        /// Where to play (`--output`): one, pulse or null.
        var outputs: [DaemonOutput]?
        /// `SECRET@PERMISSIONS`, each checked (`--password`; MPD's `password`).
        var passwords: [String]?
        /// MPD's `default_permissions` (`--default-permissions`).
        var defaultPermissions: MPDPermissions?
        /// MPD's `local_permissions`: a Unix-socket client's before `password` (`--local-permissions`).
        var localPermissions: MPDPermissions?
        /// Play along with other Tonearm players instead of pausing while one plays (`--mix`).
        var mix: Bool?
        /// The web remote (`--http`): nil when not set.
        var http: WebRemoteSetting?
    }

    /// Where the file is.
    var path: String
    var playback = Playback()
    var library = Library()
    var daemon = Daemon()
    /// The `[keys]` table: action name → the keys bound to it (a single key is a one-element
    /// array). Only checked to be strings here; the key-binding type checks the names.
    var keys: [String: [String]] = [:]
    /// The line each key was set on.
    var lines: ConfigLines

    /// The line a dotted key (`playback.volume`, `keys.quit`) was set on.
    func line(of key: String) -> Int? { lines.line(of: key.split(separator: ".").map(String.init)) }

    /// Reads and checks the file at `path`; nil when there is none.
    /// - Throws: ``ConfigError`` naming the file and, for each problem, its line and key.
    static func load(path: String) throws(ConfigError) -> ConfigFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.isReadableFile(atPath: path) ? "it is not UTF-8 text" : "permission denied"
            throw ConfigError(path: path, problems: [ConfigProblem(kind: .unreadable(reason))])
        }
        let file = try parse(text, path: path)
        let problems = file.keyBindingProblems()
        guard problems.isEmpty else { throw ConfigError(path: path, problems: problems) }
        return file
    }

    /// The `[keys]` bindings that the play screen cannot take (an unknown action, with the
    /// nearest one, or an unknown key name), each with its line: checked when the file is
    /// loaded, so that `tonearm config` reports them as it reports any other problem.
    func keyBindingProblems() -> [ConfigProblem] {
        KeyBindings.checking(keys).problems.map { error in
            let action = error.action
            var message = "\(error)"
            if case .unknownAction = error,
               let near = ErrorReport.suggestion(for: action, among: KeyAction.allCases.map(\.rawValue)) {
                message += "; did you mean '\(near)'?"
            }
            return ConfigProblem(line: line(of: "keys.\(action)"), key: "keys.\(action)", kind: .invalidValue(message))
        }
    }

    /// Parses and checks `text` as the file at `path` (which names it in errors and anchors
    /// its relative paths).
    static func parse(_ text: String, path: String) throws(ConfigError) -> ConfigFile {
        let document = try ConfigDocument(parsing: text, path: path)
        var reader = Reader(file: ConfigFile(path: path, lines: document.lines))
        reader.read(document.root)
        guard reader.problems.isEmpty else { throw ConfigError(path: path, problems: reader.problems) }
        return reader.file
    }
}

/// The keys a config file may have, for checking and for "did you mean".
enum ConfigSchema {
    static let tables = ["playback", "keys", "library", "daemon"]
    static let playbackKeys = ["output", "device", "volume", "eq", "replaygain", "preamp", "crossfade", "repeat", "shuffle"]
    static let libraryKeys = ["database", "folders"]
    static let daemonKeys = ["music", "listen", "outputs", "password", "default_permissions", "local_permissions", "mix", "http"]

    /// The keys of `table` (nil for `[keys]`, whose keys are free).
    static func keys(of table: String) -> [String]? {
        switch table {
        case "playback": playbackKeys
        case "library": libraryKeys
        case "daemon": daemonKeys
        default: nil
        }
    }

    /// Every known dotted key (not the free-form `[keys]` table's).
    static var allKeys: [String] {
        playbackKeys.map { "playback.\($0)" } + libraryKeys.map { "library.\($0)" } + daemonKeys.map { "daemon.\($0)" }
    }

    /// The known name nearest to `name`, else nil (``NearestName``).
    static func suggestion(for name: String, among candidates: [String]) -> String? {
        NearestName.suggestion(for: name, among: candidates)
    }
}

/// Reads a parsed document into a ``ConfigFile``, collecting every problem.
private struct Reader {
    var file: ConfigFile
    /// The typed reading of values, and the problems found.
    var values: ConfigValues
    var problems: [ConfigProblem] { values.problems }

    init(file: ConfigFile) {
        self.file = file
        values = ConfigValues(lines: file.lines)
    }

    mutating func read(_ root: TOMLTable) {
        for key in root.keys.sorted() {
            guard let value = root[key] else { continue }
            switch key {
            case "playback":
                guard let t = values.table(value, key: key) else { continue }
                readPlayback(t)
            case "library":
                guard let t = values.table(value, key: key) else { continue }
                readLibrary(t)
            case "keys":
                guard let t = values.table(value, key: key) else { continue }
                readKeys(t)
            case "daemon":
                guard let t = values.table(value, key: key) else { continue }
                readDaemon(t)
            default:
                unknown(key, in: nil, isTable: value.type == .table)
            }
        }
    }

    private mutating func readPlayback(_ t: TOMLTable) {
        var p = ConfigFile.Playback()
        for key in t.keys.sorted() {
            guard let v = t[key] else { continue }
            let k = "playback.\(key)"
            switch key {
            case "output":
                p.output = values.string(v, key: k).flatMap { s in convert(k) { try OutputSelection(parsing: s) } }
            case "device":
                if let s = values.string(v, key: k) {
                    if s.trimmingCharacters(in: .whitespaces).isEmpty {
                        problem(k, .invalidValue("needs an output name (see tonearm outputs)"))
                    } else {
                        p.device = s
                    }
                }
            case "volume":
                p.volume = values.integer(v, key: k, in: 0...100, allowed: "between 0 and 100")
            case "eq":
                p.eq = values.string(v, key: k).flatMap { s in convert(k) { try EQChoice(parsing: s) } }
            case "replaygain":
                p.replayGain = values.choice(v, key: k, ReplayGainMode.allCases.map(\.rawValue)).flatMap(ReplayGainMode.init(rawValue:))
            case "preamp":
                p.preamp = values.number(v, key: k, in: -20...20, allowed: "between -20 and +20 dB")
            case "crossfade":
                p.crossfade = values.number(v, key: k, in: 0...30, allowed: "between 0 and 30 seconds")
            case "repeat":
                if let s = values.string(v, key: k) {
                    if let r = PlaybackOptions.repeatValue(s) { p.repeatMode = r } else {
                        problem(k, .invalidValue("must be off, one or all, not '\(s)'"))
                    }
                }
            case "shuffle":
                p.shuffle = values.bool(v, key: k)
            default:
                unknown(key, in: "playback", isTable: v.type == .table)
            }
        }
        file.playback = p
    }

    private mutating func readLibrary(_ t: TOMLTable) {
        for key in t.keys.sorted() {
            guard let v = t[key] else { continue }
            let k = "library.\(key)"
            switch key {
            case "database":
                if let s = values.string(v, key: k) {
                    if s.isEmpty { problem(k, .invalidValue("needs a path")) } else { file.library.database = absolute(s) }
                }
            case "folders":
                file.library.folders = values.strings(v, key: k, allowEmptyStrings: false).map { $0.map(absolute) }
            default:
                unknown(key, in: "library", isTable: v.type == .table)
            }
        }
    }

    private mutating func readDaemon(_ t: TOMLTable) {
        var d = ConfigFile.Daemon()
        for key in t.keys.sorted() {
            guard let v = t[key] else { continue }
            let k = "daemon.\(key)"
            switch key {
            case "music":
                d.music = values.strings(v, key: k, allowEmptyStrings: false).map { $0.map(absolute) }
            case "listen":
                // An empty array: no TCP (a single string is one address).
                guard let all = v.array?.isEmpty == true ? [] : values.strings(v, key: k, allowEmptyStrings: false) else { continue }
                var addresses: [MPDListenAddress] = []
                for (i, s) in all.enumerated() {
                    guard let a = try? MPDListenAddress(parsing: s), case .tcp = a else {
                        problem(k, .invalidValue("item \(i + 1) '\(s)' is not ADDR:PORT, as in 127.0.0.1:6600 (the Unix socket is always there)"))
                        break
                    }
                    addresses.append(a)
                }
                if addresses.count == all.count { d.listen = addresses }
            case "outputs":
                guard let all = values.strings(v, key: k, allowEmptyStrings: false) else { continue }
                guard !all.isEmpty else {
                    problem(k, .invalidValue("needs an output: \(DaemonOutput.syntax)"))
                    continue
                }
                var outputs: [DaemonOutput] = []
                for (i, text) in all.enumerated() {
                    do { outputs.append(try DaemonOutput(parsing: text)) } catch {
                        problem(k, .invalidValue("item \(i + 1): \(error)"))
                        break
                    }
                }
                if outputs.count == all.count { d.outputs = outputs }
            case "password":
                guard let all = values.strings(v, key: k, allowEmptyStrings: false) else { continue }
                var access = MPDAccess()
                var good = true
                for (i, p) in all.enumerated() {
                    do { try access.addPassword(parsing: p) } catch {
                        problem(k, .invalidValue("item \(i + 1): \(error)"))
                        good = false
                    }
                }
                if good { d.passwords = all }
            case "default_permissions", "local_permissions":
                guard let s = values.string(v, key: k) else { continue }
                do {
                    let p = try MPDPermissions(parsing: s)
                    if key == "default_permissions" { d.defaultPermissions = p } else { d.localPermissions = p }
                } catch {
                    problem(k, .invalidValue("\(error)"))
                }
            case "mix":
                d.mix = values.bool(v, key: k)
            case "http":
                if v.bool != nil {
                    d.http = values.bool(v, key: k).map { $0 ? .on(WebRemoteSetting.defaultAddress) : .off }
                } else if let text = values.string(v, key: k) {
                    do { d.http = try WebRemoteSetting(parsing: text) } catch {
                        problem(k, .invalidValue(error.description))
                    }
                }
            default:
                unknown(key, in: "daemon", isTable: v.type == .table)
            }
        }
        file.daemon = d
    }

    private mutating func readKeys(_ t: TOMLTable) {
        for action in t.keys.sorted() {
            guard let v = t[action] else { continue }
            if let keys = values.strings(v, key: "keys.\(action)", allowEmptyStrings: false) { file.keys[action] = keys }
        }
    }

    /// Runs a parser of the CLI's own types, turning its error into a problem with `key`.
    private mutating func convert<T>(_ key: String, _ parse: () throws -> T) -> T? {
        do { return try parse() } catch {
            var m = "\(error)"
            if m.hasPrefix("--eq: ") { m.removeFirst(6) }
            problem(key, .invalidValue(m))
            return nil
        }
    }

    /// `~/x` from the home folder; a relative path from the config file's folder.
    private func absolute(_ p: String) -> String {
        if p == "~" || p.hasPrefix("~/") {
            let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
            return home + p.dropFirst()
        }
        if p.hasPrefix("/") { return p }
        return ((file.path as NSString).deletingLastPathComponent as NSString).appendingPathComponent(p)
    }

    // MARK: Problems

    private mutating func problem(_ key: String, _ kind: ConfigProblem.Kind) { values.problem(key, kind) }

    /// An unknown key in `table` (nil: the top level), with the nearest known name: one of
    /// the table's own, or a key of another table (`volume` at the top: `playback.volume`).
    private mutating func unknown(_ key: String, in table: String?, isTable: Bool) {
        let dotted = table.map { "\($0).\(key)" } ?? key
        if table == nil && isTable {
            let s = ConfigSchema.suggestion(for: key, among: ConfigSchema.tables)
            problem(dotted, .unknownTable(suggestion: s))
            return
        }
        let own = table.flatMap(ConfigSchema.keys(of:)) ?? []
        let suggestion = ConfigSchema.suggestion(for: key, among: own).map { name in table.map { "\($0).\(name)" } ?? name }
            ?? ConfigSchema.allKeys.first { $0.hasSuffix(".\(key)") }
            ?? ConfigSchema.suggestion(for: key, among: ConfigSchema.allKeys.map { String($0.split(separator: ".")[1]) })
                .flatMap { name in ConfigSchema.allKeys.first { $0.hasSuffix(".\(name)") } }
        problem(dotted, .unknownKey(suggestion: suggestion))
    }
}
