// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI

/// `tonearm daemon`'s settings: each flag wins over the config file's `[daemon]` table, which
/// wins over the defaults; the unit `--install-user-service` writes holds no password.
@Suite struct DaemonSettingsTests {
    static let file = """
        [daemon]
        music = ["/srv/a", "/srv/b"]
        listen = []
        outputs = ["null"]
        password = ["pw@read,add"]
        default_permissions = "read"
        local_permissions = "read,add"
        mix = true
        """

    func settings(_ arguments: [String], file text: String? = Self.file) throws -> DaemonCommand.Settings {
        let command = try DaemonCommand.parse(arguments)
        let file = try text.map { try ConfigFile.parse($0, path: "/home/u/.config/tonearm/config.toml") }
        return try command.settings(file: file?.daemon)
    }

    @Test func theFileGivesWhatNoFlagSays() throws {
        let s = try settings([])
        #expect(s.music == ["/srv/a", "/srv/b"])
        #expect(s.tcp == [])
        #expect(s.outputs == [.null])
        #expect(s.access.permissions(forPassword: "pw") == [.read, .add])
        #expect(s.access.initialPermissions(isLocal: false) == [.read])
        #expect(s.access.initialPermissions(isLocal: true) == [.read, .add])
    }

    @Test func eachFlagWins() throws {
        let s = try settings(["--music", "/m", "--listen", "127.0.0.1:7000", "--output", "pulse", "--password", "other@read",
                              "--default-permissions", "add", "--local-permissions", "read,control"])
        #expect(s.music == ["/m"])
        #expect(s.tcp == [.tcp(host: "127.0.0.1", port: 7000)])
        #expect(s.outputs == [.pulse])
        #expect(try settings(["--output", "null", "--output", "http:[::1]:8001"]).outputs == [.null, .http(host: "::1", port: 8001)])
        // The flag's passwords replace the file's.
        #expect(s.access.permissions(forPassword: "pw") == nil && s.access.permissions(forPassword: "other") == [.read])
        #expect(s.access.initialPermissions(isLocal: false) == [.add])
        #expect(s.access.initialPermissions(isLocal: true) == [.read, .control, .player])
        #expect(try settings(["--listen", "none"]).tcp == [])
        #expect(s.mix, "the file's mix = true")
        #expect(try settings(["--mix"], file: nil).mix && !(try settings([], file: nil).mix))
    }

    /// The web remote (`--http`, `[daemon] http`): off by default, 127.0.0.1:6680 when turned on
    /// without an address; open to the network only with a password.
    @Test func theWebRemoteIsOffUntilAskedAndNeedsAPasswordOffLoopback() throws {
        #expect(try settings([], file: nil).http == .off)
        #expect(try settings(["--http", "on"], file: nil).http == .on(host: "127.0.0.1", port: 6680))
        #expect(try settings(["--http", ":7000"], file: nil).http == .on(host: "127.0.0.1", port: 7000))
        #expect(try settings(["--http", "[::1]:7001"], file: nil).http == .on(host: "::1", port: 7001))
        #expect(try settings(["--http", "0.0.0.0:6680"]).http == .on(host: "0.0.0.0", port: 6680), "the file's password")
        #expect(throws: (any Error).self) { try settings(["--http", "0.0.0.0:6680"], file: nil) }
        #expect(throws: (any Error).self) { try settings(["--http", "6680x"], file: nil) }
        #expect(try settings([], file: "[daemon]\nhttp = true\n").http == .on(host: "127.0.0.1", port: 6680))
        #expect(try settings([], file: "[daemon]\nhttp = false\n").http == .off)
        #expect(try settings([], file: "[daemon]\nhttp = \"127.0.0.2:9000\"\n").http == .on(host: "127.0.0.2", port: 9000))
        #expect(try settings(["--http", "off"], file: "[daemon]\nhttp = true\n").http == .off, "the flag wins")
        #expect(throws: (any Error).self) { try ConfigFile.parse("[daemon]\nhttp = \"/tmp/sock\"\n", path: "/c.toml") }
    }

    @Test func withoutAFileTheDefaults() throws {
        let s = try settings([], file: nil)
        #expect(s.music == [] && s.tcp == [.tcp(host: "127.0.0.1", port: 6600)] && s.outputs == [])
        #expect(s.access.initialPermissions(isLocal: true) == .all && s.access.initialPermissions(isLocal: false) == .all)
        #expect(throws: (any Error).self) { try settings(["--local-permissions", "root"], file: nil) }
    }

    /// `tonearm config` lists the `[daemon]` table with where each value came from; passwords
    /// are counted, never shown.
    @Test func configListsTheDaemonTable() throws {
        let file = try ConfigFile.parse(Self.file, path: "/c.toml")
        let rows = ConfigCommand.daemonRows(file)
        #expect(rows.map(\.key) == ["daemon.music", "daemon.listen", "daemon.outputs", "daemon.password", "daemon.default_permissions",
                                    "daemon.local_permissions", "daemon.mix"])
        #expect(rows.map(\.text) == ["/srv/a, /srv/b", "no TCP and the Unix socket", "null", "1 (not shown)", "read", "read,add",
                                    "on (plays along with other Tonearm players)"])
        #expect(rows.map(\.source) == [2, 3, 4, 5, 6, 7, 8].map { SettingSource.file(path: "/c.toml", line: $0) })
        #expect(!rows.contains { $0.text.contains("pw") || "\($0.value)".contains("pw@") })
        let none = ConfigCommand.daemonRows(nil)
        #expect(none.allSatisfy { $0.source == .default })
        #expect(none.map(\.text) == ["none", "127.0.0.1:6600 and the Unix socket", "automatic (pulse if a server answers, else null)", "none",
                                     "all (no password)", "as default_permissions", "off (pauses while another Tonearm player plays)"])
    }

    @Test func theUnitGetsNoPassword() {
        #expect(DaemonCommand.withoutPasswords(["--music", "/m", "--password", "s@read", "--password=t@add", "--verbose"])
                == ["--music", "/m", "--verbose"])
        let unit = DaemonCommand.unitText(executable: "/usr/bin/tonearm",
                                          arguments: DaemonCommand.withoutPasswords(["--password", "s3cret@read", "--listen", "none"]))
        #expect(!unit.contains("s3cret"))
        #expect(unit.contains("ExecStart=/usr/bin/tonearm daemon --listen none\n"))
    }
}
