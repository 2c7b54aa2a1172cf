// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm
import TonearmMPDProtocol

/// `tonearm config [--json] [PLAY FLAGS…]`: the settings `play` would run with and where each
/// came from; `--path`: the config file's path; `--init [--force]`: writes a commented example.
/// A config file with problems: they are printed (file, line, key) and the status is 1.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the settings in effect and where each came from, or write an example config file.",
        discussion: """
            The config file is --config PATH, else $TONEARM_CONFIG, else \
            $XDG_CONFIG_HOME/tonearm/config.toml (~/.config/tonearm/config.toml). Flags win over \
            it; the volume is the last run's when there is one (unless --volume is given). Give \
            play's flags here to see what they change.

            Examples:
              tonearm config                          # every setting and where it came from
              tonearm config --eq rock --volume 40    # what these flags would change
              tonearm config --json
              tonearm config --init                   # a commented example file to edit
              tonearm --config ~/party.toml config
            """)

    @Flag(name: .long, help: "Print JSON: each setting with its value and source.")
    var json = false

    @Flag(name: .long, help: "Print the config file's path only.")
    var path = false

    @Flag(name: .long, help: "Write a commented example config file (all settings commented out).")
    var `init` = false

    @Option(name: .long, help: ArgumentHelp("As play's --db: the media library database.", valueName: "PATH"))
    var db: String?

    @OptionGroup(title: "Flags of play (to see how they combine with the file)") var playback: PlaybackOptions

    func validate() throws {
        if playback.force && !`init` && playback.output == nil { throw ValidationError("--force goes with --init") }
        if path && (`init` || json) { throw ValidationError("--path prints the path only; it goes with neither --init nor --json") }
    }

    func run() throws {
        let location = playback.config.location()
        if path {
            Terminal.write(location.value + "\n")
            return
        }
        if `init` {
            try writeExample(to: location.value)
            return
        }
        let file = try playback.config.loadOrExit(command: "config")
        let settings = try playback.effective(command: "config", resume: false, db: db)
        let rows = Self.rows(settings) + Self.daemonRows(file)
        if json {
            Terminal.write(Self.json(location: location, exists: file != nil, rows: rows) + "\n")
        } else {
            Terminal.write(Self.text(location: location, exists: file != nil, rows: rows))
        }
    }

    private func writeExample(to target: String) throws {
        let fm = FileManager.default
        // --force is play's (this command takes play's flags): with --init it allows overwriting.
        try Overwrite.check(target, force: playback.force)
        do {
            try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try ConfigExample.text.write(toFile: target, atomically: true, encoding: .utf8)
        } catch {
            throw CommandFailure(target, "cannot write it: \(error.localizedDescription)")
        }
        Terminal.write("Wrote \(target)\n")
    }

    /// One line of the listing: the dotted key, the value as text and as JSON, the source.
    struct Row {
        var key: String
        var text: String
        var value: JSONValue
        var source: SettingSource
    }

    static func rows(_ s: EffectiveSettings) -> [Row] {
        func num(_ d: Double) -> String { d == d.rounded() ? String(Int(d)) : String(d) }
        var rows = [
            Row(key: "playback.output", text: s.output.value?.description ?? "automatic (pulse if a server answers, else null)",
                value: s.output.value.map { .string($0.description) } ?? .null, source: s.output.source),
            Row(key: "playback.device", text: s.device.value ?? "the server's default output",
                value: s.device.value.map { .string($0) } ?? .null, source: s.device.source),
            Row(key: "playback.volume", text: s.volume.value.map(String.init) ?? "100",
                value: .number(Double(s.volume.value ?? 100)), source: s.volume.source),
            Row(key: "playback.eq", text: s.eq.value.description, value: .string(s.eq.value.description), source: s.eq.source),
            Row(key: "playback.replaygain", text: s.replayGain.value.rawValue, value: .string(s.replayGain.value.rawValue),
                source: s.replayGain.source),
            Row(key: "playback.preamp", text: num(s.preamp.value) + " dB", value: .number(s.preamp.value), source: s.preamp.source),
            Row(key: "playback.crossfade", text: num(s.crossfade.value) + " s", value: .number(s.crossfade.value),
                source: s.crossfade.source),
            Row(key: "playback.repeat", text: repeatName(s.repeatMode.value), value: .string(repeatName(s.repeatMode.value)),
                source: s.repeatMode.source),
            Row(key: "playback.shuffle", text: s.shuffle.value ? "true" : "false", value: .bool(s.shuffle.value),
                source: s.shuffle.source),
        ]
        for action in s.keys.keys.sorted() {
            let k = s.keys[action]!
            rows.append(Row(key: "keys.\(action)", text: k.value.joined(separator: ", "), value: .array(k.value.map(JSONValue.string)),
                            source: k.source))
        }
        rows.append(Row(key: "library.database", text: s.libraryDatabase.value, value: .string(s.libraryDatabase.value),
                        source: s.libraryDatabase.source))
        rows.append(Row(key: "library.folders", text: s.musicFolders.value.isEmpty ? "none" : s.musicFolders.value.joined(separator: ", "),
                        value: .array(s.musicFolders.value.map(JSONValue.string)), source: s.musicFolders.source))
        return rows
    }

    /// `tonearm daemon`'s settings of the `[daemon]` table (its flags win over them when it
    /// runs). Passwords are counted, never shown.
    static func daemonRows(_ file: ConfigFile?) -> [Row] {
        let d = file?.daemon
        func source(_ key: String, _ set: Bool) -> SettingSource {
            set ? .file(path: file?.path ?? "", line: file?.line(of: "daemon.\(key)")) : .default
        }
        let music = d?.music ?? []
        let listen = (d?.listen ?? [.tcp(host: "127.0.0.1", port: 6600)]).map(\.description)
        let output = d?.outputs?.first?.description
        let passwords = d?.passwords?.count ?? 0
        func permissions(_ p: MPDPermissions?, _ unset: String) -> (String, JSONValue) {
            guard let p else { return (unset, .null) }
            return (p.isEmpty ? "none" : p.description, .string(p.description))
        }
        let defaults = permissions(d?.defaultPermissions, passwords == 0 ? "all (no password)" : "none (a password is set)")
        let local = permissions(d?.localPermissions, "as default_permissions")
        return [
            Row(key: "daemon.music", text: music.isEmpty ? "none" : music.joined(separator: ", "), value: .array(music.map(JSONValue.string)),
                source: source("music", d?.music != nil)),
            Row(key: "daemon.listen", text: (listen.isEmpty ? "no TCP" : listen.joined(separator: ", ")) + " and the Unix socket",
                value: .array(listen.map(JSONValue.string)), source: source("listen", d?.listen != nil)),
            Row(key: "daemon.outputs", text: output ?? "automatic (pulse if a server answers, else null)",
                value: output.map { .array([.string($0)]) } ?? .null, source: source("outputs", d?.outputs != nil)),
            Row(key: "daemon.password", text: passwords == 0 ? "none" : "\(passwords) (not shown)", value: .number(Double(passwords)),
                source: source("password", d?.passwords != nil)),
            Row(key: "daemon.default_permissions", text: defaults.0, value: defaults.1,
                source: source("default_permissions", d?.defaultPermissions != nil)),
            Row(key: "daemon.local_permissions", text: local.0, value: local.1, source: source("local_permissions", d?.localPermissions != nil)),
            Row(key: "daemon.mix", text: d?.mix == true ? "on (plays along with other Tonearm players)" : "off (pauses while another Tonearm player plays)",
                value: .bool(d?.mix == true), source: source("mix", d?.mix != nil)),
        ]
    }

    private static func repeatName(_ r: RepeatMode?) -> String {
        switch r {
        case nil, .none?: "off"
        case .one?: "one"
        case .all?: "all"
        }
    }

    /// `Config file: PATH (source[, not present])`, then `key  value  source` in columns.
    static func text(location: Setting<String>, exists: Bool, rows: [Row]) -> String {
        var out = "Config file: \(location.value) (\(location.source)\(exists ? "" : "; there is no file"))\n"
        let keyWidth = rows.map(\.key.count).max() ?? 0
        let valueWidth = min(40, rows.map(\.text.count).max() ?? 0)
        for r in rows {
            let key = r.key.padding(toLength: keyWidth, withPad: " ", startingAt: 0)
            let value = r.text.count >= valueWidth ? r.text : r.text.padding(toLength: valueWidth, withPad: " ", startingAt: 0)
            out += "\(key)  \(value)  \(r.source)\n"
        }
        return out
    }

    /// `{"configFile": {path, exists, source…}, "settings": {key: {value, source, file, line,
    /// flag, variable}}}`.
    static func json(location: Setting<String>, exists: Bool, rows: [Row]) -> String {
        var settings: [String: JSONValue] = [:]
        for r in rows {
            var o = sourceFields(r.source)
            o["value"] = r.value
            settings[r.key] = .object(o)
        }
        var file = sourceFields(location.source)
        file["path"] = .string(location.value)
        file["exists"] = .bool(exists)
        return JSONValue.object(["configFile": .object(file), "settings": .object(settings)]).rendered()
    }

    private static func sourceFields(_ s: SettingSource) -> [String: JSONValue] {
        var o: [String: JSONValue] = ["source": .string(s.kind)]
        switch s {
        case .default: break
        case .file(let path, let line):
            o["file"] = .string(path)
            o["line"] = line.map { .number(Double($0)) } ?? .null
        case .flag(let f): o["flag"] = .string(f)
        case .environment(let v): o["variable"] = .string(v)
        case .remembered(let path): o["file"] = .string(path)
        }
        return o
    }
}

/// A JSON value, printed with sorted keys and two-space indents.
enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    func rendered(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .string(let s): return Self.quote(s)
        case .array(let a):
            if a.isEmpty { return "[]" }
            return "[\n" + a.map { inner + $0.rendered(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let o):
            if o.isEmpty { return "{}" }
            return "{\n" + o.keys.sorted().map { inner + Self.quote($0) + ": " + o[$0]!.rendered(indent: inner) }
                .joined(separator: ",\n") + "\n\(indent)}"
        }
    }

    private static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
