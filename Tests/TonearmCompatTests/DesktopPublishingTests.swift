// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmCompat
import TonearmTestSupport

/// `DesktopPublishing`'s rules, each alone, with a publication of its own (not the process's)
/// on real private `dbus-daemon`s, the environment given rather than set: the program's name as
/// a valid bus name; the session bus from `DBUS_SESSION_BUS_ADDRESS` or the user's socket, never
/// an autolaunched one; published once on the first call, not again while it runs; nothing with
/// `TONEARM_MPRIS=0` or without a bus; moved to a bus that came later; nothing after
/// `unpublish()` until `publish(onBus:)`.
@Suite struct DesktopPublishingTests {
    @Test func theProgramsNameBecomesAValidBusNameElement() {
        #expect(DesktopPublishing.busNameElement("tonearmPackageTests.xctest") == "tonearmPackageTests_xctest")
        #expect(DesktopPublishing.busNameElement("my-player") == "my_player")
        #expect(DesktopPublishing.busNameElement("9lives") == "_9lives")
        #expect(DesktopPublishing.busNameElement("音樂") == "__")
        #expect(DesktopPublishing.busNameElement("") == "app")
        let publishing = DesktopPublishing(programName: "播放器 2")
        #expect(publishing.identity == "播放器 2" && publishing.busNameSuffix == "____2")
    }

    @Test func theSessionBusIsTheEnvironmentsOrTheUsersSocketAndNeverAutolaunched() throws {
        let dir = try TempDir("desktop-publishing-runtime")
        defer { dir.remove() }
        #expect(DesktopPublishing.sessionBusAddress(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]) == "unix:path=/x")
        #expect(DesktopPublishing.sessionBusAddress(["XDG_RUNTIME_DIR": dir.path]) == nil, "no bus socket there")
        _ = FileManager.default.createFile(atPath: dir.file("bus"), contents: nil)
        #expect(DesktopPublishing.sessionBusAddress(["XDG_RUNTIME_DIR": dir.path]) == "unix:path=" + dir.file("bus"))
        #expect(DesktopPublishing.sessionBusAddress(["DBUS_SESSION_BUS_ADDRESS": "", "DISPLAY": ":0"]) == nil)
    }

    @Test func theFirstCallPublishesAndLaterOnesKeepIt() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let publishing = DesktopPublishing(programName: "publishing-once")
        defer { publishing.unpublish() }
        publishing.ensurePublished(environment: bus.environment)
        let name = try #require(publishing.busName)
        #expect(name == "org.mpris.MediaPlayer2.publishing_once")
        let owners = try run("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                           "org.freedesktop.DBus.NameHasOwner", "string:" + name], environment: bus.environment)
        #expect(owners.stdout.contains("boolean true"), "\(owners.stdout)")
        publishing.ensurePublished(environment: bus.environment)
        #expect(publishing.busName == name, "the same publication, not a second one under an instance name")
    }

    @Test func nothingIsPublishedWhenTurnedOffOrWithoutABus() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let off = DesktopPublishing(programName: "publishing-off")
        off.ensurePublished(environment: bus.environment.merging(["TONEARM_MPRIS": "0"]) { $1 })
        #expect(off.busName == nil)
        let none = DesktopPublishing(programName: "publishing-none")
        none.ensurePublished(environment: [:])
        #expect(none.busName == nil)
        // A bus that came later is used.
        none.ensurePublished(environment: bus.environment)
        #expect(none.busName == "org.mpris.MediaPlayer2.publishing_none")
        none.unpublish()
        #expect(none.busName == nil)
        none.ensurePublished(environment: bus.environment)
        #expect(none.busName == nil, "withdrawn until publish(onBus:)")
        try none.publish(onBus: bus.address)
        #expect(none.busName == "org.mpris.MediaPlayer2.publishing_none")
        none.unpublish()
    }

    @Test func aBusThatWasNeverThereIsNotRetriedAtEveryCall() throws {
        let dir = try TempDir("desktop-publishing-nobus")
        defer { dir.remove() }
        let publishing = DesktopPublishing(programName: "publishing-absent")
        let env = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=" + dir.file("bus.sock")]
        publishing.ensurePublished(environment: env)
        #expect(publishing.busName == nil)
        // Asked again with the same address, which never answered: not tried again (a program
        // that asks for the centers at every tick does not connect at every tick)...
        publishing.ensurePublished(environment: env)
        #expect(publishing.busName == nil)
        // ...until the environment names another bus.
        let bus = try PrivateDBus()
        defer { bus.stop() }
        publishing.ensurePublished(environment: bus.environment)
        #expect(publishing.busName != nil)
        publishing.unpublish()
    }
}
