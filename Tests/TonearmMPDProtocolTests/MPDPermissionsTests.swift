// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol

/// MPD's permission settings read as MPD reads them (`Permission.cxx`), and the order of its
/// checks (`command_check_request`: the permission before the argument count).
struct MPDPermissionsTests {
    @Test func permissionListsAsMPDReadsThem() throws {
        #expect(try MPDPermissions(parsing: "read,add") == [.read, .add])
        // Empty items are skipped; `control` implies `player` (MPD 0.22 had no `player`).
        #expect(try MPDPermissions(parsing: ",read,,control,") == [.read, .control, .player])
        #expect(try MPDPermissions(parsing: "player") == [.player])
        #expect(try MPDPermissions(parsing: "") == [])
        #expect(throws: MPDPermissionError("unknown permission \"write\" in \"read,write\" (known: read, add, player, control, admin)")) {
            try MPDPermissions(parsing: "read,write")
        }
        // Names are MPD's, lowercase.
        #expect(throws: MPDPermissionError.self) { try MPDPermissions(parsing: "Read") }
    }

    @Test func passwordsAndDefaults() throws {
        var access = MPDAccess()
        // Without passwords, everything is allowed.
        #expect(access.initialPermissions == .all)
        // The secret ends at the first `@` (MPD splits there): the rest must be permissions.
        #expect(throws: MPDPermissionError("unknown permission \"t@read\" in \"t@read,add\" (known: read, add, player, control, admin)")) {
            try access.addPassword(parsing: "s3cr@t@read,add")
        }
        #expect(access.passwords.isEmpty)
        var other = MPDAccess()
        try other.addPassword(parsing: "pw@read,add")
        #expect(other.permissions(forPassword: "pw") == [.read, .add])
        #expect(other.permissions(forPassword: "nope") == nil)
        // With a password, a new connection has nothing, unless default permissions say so.
        #expect(other.initialPermissions == [])
        try other.setDefaultPermissions(parsing: "read")
        #expect(other.initialPermissions == [.read])
        #expect(throws: MPDPermissionError("\"@\" not found in password string \"secret\" (expected SECRET@read,add,control,admin)")) {
            try other.addPassword(parsing: "secret")
        }
        #expect(throws: MPDPermissionError.self) { try other.setDefaultPermissions(parsing: "read,root") }
        // local_permissions: the Unix socket's start, the default ones until set; TCP keeps the default.
        #expect(other.initialPermissions(isLocal: true) == [.read])
        try other.setLocalPermissions(parsing: "read,control")
        #expect(other.initialPermissions(isLocal: true) == [.read, .control, .player])
        #expect(other.initialPermissions(isLocal: false) == [.read])
        #expect(throws: MPDPermissionError.self) { try other.setLocalPermissions(parsing: "all") }
    }

    @Test func thePermissionIsCheckedBeforeTheArguments() throws {
        let play = try MPDRequest(line: Array("play 1 2 3".utf8))
        #expect(throws: MPDAck(.permission, "you don't have permission for \"play\"", command: "play")) {
            try MPDCommands.check(play, permissions: [.read, .add])
        }
        #expect(throws: MPDAck(.argument, "too many arguments for \"play\"", command: "play")) {
            try MPDCommands.check(play, permissions: [.read, .player])
        }
        // Unknown stays unknown; the commands that need nothing need nothing.
        #expect(throws: MPDAck(.unknown, "unknown command \"foo\"")) { try MPDCommands.check(MPDRequest(line: Array("foo".utf8)), permissions: []) }
        for c in ["ping", "password x", "commands", "notcommands", "tagtypes", "binarylimit 64", "close"] {
            #expect(throws: Never.self) { try MPDCommands.check(MPDRequest(line: Array(c.utf8)), permissions: []) }
        }
        #expect(MPDCommands.permission(for: "update") == .control)
        #expect(MPDCommands.permission(for: "enableoutput") == .admin)
        #expect(MPDCommands.permission(for: "findadd") == .add)
    }
}
