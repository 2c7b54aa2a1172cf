// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Synchronization
import Tonearm
import TonearmConfig

/// Where a setting's value came from, for `tonearm config`.
enum SettingSource: Equatable, Sendable, CustomStringConvertible {
    /// Nothing set it.
    case `default`
    /// The config file, at a line.
    case file(path: String, line: Int?)
    /// A command-line flag (`--volume`).
    case flag(String)
    /// An environment variable (`TONEARM_CONFIG`, `XDG_DATA_HOME`).
    case environment(String)
    /// What the last run left in the state folder: the volume (in the saved queue); with
    /// `--resume`, the EQ and speed.
    case remembered(path: String)

    var description: String {
        switch self {
        case .default: "default"
        case .file(let path, let line): "config file \(path)" + (line.map { ":\($0)" } ?? "")
        case .flag(let f): "flag \(f)"
        case .environment(let v): "environment \(v)"
        case .remembered(let path): "remembered in \(path)"
        }
    }

    /// `default`, `file`, `flag`, `environment` or `remembered`.
    var kind: String {
        switch self {
        case .default: "default"
        case .file: "file"
        case .flag: "flag"
        case .environment: "environment"
        case .remembered: "remembered"
        }
    }
}

/// A setting's value and where it came from.
struct Setting<Value> {
    var value: Value
    var source: SettingSource
}

extension Setting: Sendable where Value: Sendable {}

/// `--config PATH`, on the root command (`tonearm --config PATH COMMAND`) and in `play`'s,
/// `pick`'s and `config`'s options (where it may also follow the command's name).
struct ConfigOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The config file (default: $TONEARM_CONFIG, else $XDG_CONFIG_HOME/tonearm/config.toml).",
                                            valueName: "PATH"))
    var config: String?

    /// The `--config` the command line gave, recorded as it is parsed, for the commands that
    /// do not declare the option themselves (the library commands).
    static let given = Mutex<String?>(nil)

    func validate() throws {
        if let config { Self.given.withLock { $0 = config } }
    }

    /// Where the config file is, and why there.
    func location(environment: [String: String] = ProcessInfo.processInfo.environment) -> Setting<String> {
        ConfigLocation.resolve(flag: config ?? Self.given.withLock { $0 }, environment: environment)
    }

    /// The config file, checked; nil when there is none at the default location.
    /// - Throws: ``ConfigError`` for a file with problems, or one named by `--config` or
    ///   `TONEARM_CONFIG` that does not exist.
    func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> ConfigFile? {
        try Self.load(location(environment: environment))
    }

    /// The config file where the command line (`--config` on the root command) and the
    /// environment say it is.
    static func load(environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> ConfigFile? {
        try load(ConfigLocation.resolve(flag: given.withLock { $0 }, environment: environment))
    }

    private static func load(_ where_: Setting<String>) throws(ConfigError) -> ConfigFile? {
        let file = try ConfigFile.load(path: where_.value)
        if file == nil, where_.source != .default, where_.source != .environment("XDG_CONFIG_HOME") {
            throw ConfigError(path: where_.value, problems: [ConfigProblem(kind: .unreadable("there is no such file (named by \(where_.source))"))])
        }
        return file
    }

    /// ``load(environment:)`` for a command: a problem ends it, reported in the one form
    /// (`tonearm: <command>: the config file has problems:` and a line for each), status 1.
    func loadOrExit(command: String) throws -> ConfigFile? {
        do { return try load() } catch {
            throw CommandFailure(nil, "the config file has problems:\n\(error)")
        }
    }
}

/// Where the config file is looked for.
enum ConfigLocation {
    /// `--config`, else `$TONEARM_CONFIG`, else `$XDG_CONFIG_HOME/tonearm/config.toml`, else
    /// `~/.config/tonearm/config.toml`.
    static func resolve(flag: String?, environment: [String: String]) -> Setting<String> {
        if let flag, !flag.isEmpty { return Setting(value: absolute(flag), source: .flag("--config")) }
        if let env = environment["TONEARM_CONFIG"], !env.isEmpty {
            return Setting(value: absolute(env), source: .environment("TONEARM_CONFIG"))
        }
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return Setting(value: xdg + "/tonearm/config.toml", source: .environment("XDG_CONFIG_HOME"))
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return Setting(value: home + "/.config/tonearm/config.toml", source: .default)
    }

    private static func absolute(_ p: String) -> String {
        p.hasPrefix("/") ? p : FileManager.default.currentDirectoryPath + "/" + p
    }
}

/// The settings `play` runs with, each with its source: a flag wins over what the last run
/// left (the volume always; the EQ and speed with `--resume`), which wins over the config file,
/// which wins over the defaults.
struct EffectiveSettings {
    /// The output (nil: automatic, PulseAudio if a server answers, else null).
    var output: Setting<OutputSelection?>
    /// The PulseAudio sink (nil: the server's default).
    var device: Setting<String?>
    /// 0–100 (nil: the player's default, full).
    var volume: Setting<Int?>
    var eq: Setting<EQChoice>
    var rate: Setting<Float>
    var replayGain: Setting<ReplayGainMode>
    var preamp: Setting<Double>
    var crossfade: Setting<Double>
    /// nil: as it was (a resumed queue keeps its repeat mode; a new one does not repeat).
    var repeatMode: Setting<RepeatMode?>
    var shuffle: Setting<Bool>
    var libraryDatabase: Setting<String>
    var musicFolders: Setting<[String]>
    /// The config file's `[keys]` table, each with its line.
    var keys: [String: Setting<[String]>]

    /// Combines the flags (nil: not given), the last run's volume (0…1, from the saved queue),
    /// the EQ and speed saved for `resume`, the config file and the defaults.
    init(flags: PlaybackOptions, db: String? = nil, file: ConfigFile?, rememberedVolume: Setting<Float>?,
         resumed: Setting<SavedPlaybackSettings>?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        func fromFile(_ key: String) -> SettingSource { .file(path: file?.path ?? "", line: file?.line(of: key)) }
        func pick<T>(_ flag: T?, _ name: String, _ config: T?, _ key: String, default d: T) -> Setting<T> {
            if let flag { return Setting(value: flag, source: .flag(name)) }
            if let config { return Setting(value: config, source: fromFile(key)) }
            return Setting(value: d, source: .default)
        }
        /// For settings whose default is "none": nil stays nil.
        func pickOptional<T>(_ flag: T?, _ name: String, _ config: T?, _ key: String) -> Setting<T?> {
            if let flag { return Setting(value: flag, source: .flag(name)) }
            if let config { return Setting(value: config, source: fromFile(key)) }
            return Setting(value: nil, source: .default)
        }
        let p = file?.playback
        output = pickOptional(try flags.output.map { try OutputSelection(parsing: $0) }, "--output", p?.output, "playback.output")
        device = pickOptional(flags.device, "--device", p?.device, "playback.device")
        if let v = flags.volume {
            volume = Setting(value: v, source: .flag("--volume"))
        } else if let r = rememberedVolume {
            volume = Setting(value: Int((r.value * 100).rounded()), source: r.source)
        } else {
            volume = pickOptional(nil, "--volume", p?.volume, "playback.volume")
        }
        if let e = flags.sound.eq {
            eq = Setting(value: try EQChoice(parsing: e), source: .flag("--eq"))
        } else if let r = resumed, let e = r.value.eq, let choice = try? EQChoice(parsing: e) {
            eq = Setting(value: choice, source: r.source)
        } else {
            eq = pick(nil, "--eq", p?.eq, "playback.eq", default: .preset(.flat))
        }
        // `--rate` has a default of 1: a resumed speed applies unless another one was asked for.
        if flags.sound.rate != 1 {
            rate = Setting(value: Float(flags.sound.rate), source: .flag("--rate"))
        } else if let r = resumed, let v = r.value.rate {
            rate = Setting(value: v, source: r.source)
        } else {
            rate = Setting(value: 1, source: .default)
        }
        replayGain = pick(flags.replaygain.flatMap(ReplayGainMode.init(rawValue:)), "--replaygain", p?.replayGain, "playback.replaygain",
                          default: .off)
        preamp = pick(flags.preamp, "--preamp", p?.preamp, "playback.preamp", default: 0)
        crossfade = pick(flags.crossfade, "--crossfade", p?.crossfade, "playback.crossfade", default: 0)
        repeatMode = pickOptional(flags.repeatMode.flatMap(PlaybackOptions.repeatValue), "--repeat", p?.repeatMode, "playback.repeat")
        shuffle = pick(flags.shuffle, flags.shuffle == false ? "--no-shuffle" : "--shuffle", p?.shuffle, "playback.shuffle",
                       default: false)
        if let db {
            libraryDatabase = Setting(value: db, source: .flag("--db"))
        } else if let d = file?.library.database {
            libraryDatabase = Setting(value: d, source: fromFile("library.database"))
        } else {
            let xdg = environment["XDG_DATA_HOME"].map { $0.hasPrefix("/") } ?? false
            libraryDatabase = Setting(value: MediaLibrary.defaultPath, source: xdg ? .environment("XDG_DATA_HOME") : .default)
        }
        musicFolders = pick(nil, "", file?.library.folders, "library.folders", default: [])
        var keys: [String: Setting<[String]>] = [:]
        for (action, k) in file?.keys ?? [:] { keys[action] = Setting(value: k, source: fromFile("keys.\(action)")) }
        self.keys = keys
    }

    /// What `play` hands the session.
    /// - Throws: ``CommandFailure`` naming the config file's line when its `[keys]` bind an
    ///   unknown action or key.
    func sessionSettings(mix: Bool, resume: Bool, effects: EffectOptions) throws -> PlaySession.Settings {
        var settings = PlaySession.Settings(
            volume: volume.value.map { Float($0) / 100 }, repeatMode: repeatMode.value, shuffle: shuffle.value,
            replayGain: replayGain.value, preamp: preamp.value, crossfade: crossfade.value, mix: mix, resume: resume,
            eq: eq.value, rate: rate.value, effects: effects,
            keyBindings: keys.mapValues(\.value),
            keyBindingPlaces: keys.mapValues { k in
                if case .file(let path, let line) = k.source { return path + (line.map { ":\($0)" } ?? "") }
                return "\(k.source)"
            })
        do {
            settings.keys = try KeyBindings(overrides: settings.keyBindings)
        } catch let error as KeyBindingError {
            throw CommandFailure(settings.keyBindingPlaces[error.action] ?? "[keys]", "\(error)")
        }
        return settings
    }
}

/// The library database `library`, `pick` and `play --db` open when `--db` is not given: the
/// config file's `[library] database`, else ``MediaLibrary/defaultPath``. A config file with
/// problems is reported on standard error and passed over here (the commands that play report
/// it and stop).
enum ConfiguredLibrary {
    static func databasePath() -> String {
        do { return try ConfigOption.load()?.library.database ?? MediaLibrary.defaultPath } catch {
            Terminal.writeError("the config file has problems (its library database is not used):\n\(error)")
            return MediaLibrary.defaultPath
        }
    }
}
