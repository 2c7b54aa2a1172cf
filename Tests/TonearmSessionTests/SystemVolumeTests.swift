// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmSession
import TonearmTestSupport

/// `SystemVolume` and `tonearm volume` against a private PulseAudio server, checked with `pactl`.
@Suite(.serialized) struct SystemVolumeTests {
    @Test func volumeAndMuteRoundTripThroughPactl() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let system = SystemVolume(server: server.serverString)
        #expect(try system.volume() == 1)
        try server.pactl("set-sink-volume", "test_null", "37%")
        #expect(abs(try system.volume() - 0.37) < 0.001)
        try system.setVolume(0.62)
        #expect(try server.volumePercents("test_null") == [62, 62])
        try system.setVolume(1.7) // clamped
        #expect(try server.volumePercents("test_null") == [100, 100])
        #expect(throws: TonearmError.self) { try system.setVolume(.nan) }

        #expect(try system.isMuted() == false)
        try system.setMuted(true)
        #expect(try server.isMuted("test_null"))
        try server.pactl("set-sink-mute", "test_null", "0")
        #expect(try system.isMuted() == false)

        // Balance is kept: left 80 %, right 40 % set to an average of 30 % gives 40 % and 20 %.
        try server.pactl("set-sink-volume", "test_null", "80%", "40%")
        #expect(abs(try system.volume() - 0.6) < 0.001)
        try system.setVolume(0.3)
        #expect(try server.volumePercents("test_null") == [40, 20])
    }

    @Test func aNamedOutputAndTheDefaultOne() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones")
        let phones = SystemVolume(server: server.serverString, output: "phones")
        try phones.setVolume(0.25)
        #expect(try server.volumePercents("phones") == [25, 25])
        #expect(try server.volumePercents("test_null") == [100, 100])
        let followsDefault = SystemVolume(server: server.serverString)
        try server.pactl("set-default-sink", "phones")
        #expect(try followsDefault.state() == SystemVolumeState(volume: try followsDefault.volume(), isMuted: false, outputName: "phones"))
        #expect(abs(try followsDefault.volume() - 0.25) < 0.001)

        do {
            _ = try SystemVolume(server: server.serverString, output: "nope").volume()
            Issue.record("an unknown output was accepted")
        } catch let TonearmError.outputUnavailable(_, reason) {
            #expect(reason.contains("'nope'") && reason.contains("test_null, phones"), "\(reason)")
        }
    }

    @Test func changesReportWhatPactlChanges() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("other", description: "Other")
        let changes = Collected(try SystemVolume(server: server.serverString).changes)
        try server.pactl("set-sink-volume", "test_null", "25%")
        #expect(await changes.wait { abs($0.volume - 0.25) < 0.001 && !$0.isMuted && $0.outputName == "test_null" })
        try server.pactl("set-sink-mute", "test_null", "1")
        #expect(await changes.wait { $0.isMuted })
        // Another output's volume is not this one's; a new default with another volume is.
        try server.pactl("set-sink-volume", "other", "55%")
        try server.pactl("set-default-sink", "other")
        #expect(await changes.wait { $0.outputName == "other" && abs($0.volume - 0.55) < 0.001 })
        #expect(!changes.all.contains { $0.outputName == "other" && $0.volume == 1 })
    }

    @Test func withoutAServerItSaysSo() throws {
        let dir = try TempDir("volume")
        defer { dir.remove() }
        let system = SystemVolume(server: "unix:\(dir.path)/no-such-socket", timeout: 1)
        #expect(throws: TonearmError.self) { try system.volume() }
        #expect(throws: TonearmError.self) { try system.setMuted(true) }
        #expect(throws: TonearmError.self) { _ = try system.changes }
    }

    @Test func tonearmVolumePrintsAndChangesIt() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadNullSink("phones", description: "Phones")
        let tonearm = try tonearmBinary()
        func volume(_ args: String...) throws -> RunResult {
            try run(tonearm, ["volume"] + args, environment: server.environment)
        }
        var r = try volume()
        #expect(r.status == 0 && r.stdout.hasPrefix("100%"), "\(r.stdout) \(r.stderr)")
        r = try volume("30")
        #expect(r.stdout.hasPrefix("30%"))
        #expect(try server.volumePercents("test_null") == [30, 30])
        r = try volume("+5")
        #expect(r.stdout.hasPrefix("35%"))
        r = try volume("-10")
        #expect(r.stdout.hasPrefix("25%"), "\(r.stdout) \(r.stderr)")
        #expect(try server.volumePercents("test_null") == [25, 25])
        r = try volume("mute")
        #expect(r.stdout.contains("muted"))
        #expect(try server.isMuted("test_null"))
        r = try volume("unmute")
        #expect(!r.stdout.contains("muted"))
        #expect(try !server.isMuted("test_null"))
        r = try volume("--device", "phones", "70")
        #expect(r.status == 0 && r.stdout.contains("phones"))
        #expect(try server.volumePercents("phones") == [70, 70])

        for bad in ["150", "loud", "+", "5%"] {
            r = try volume(bad)
            #expect(r.status == 64, "\(bad): \(r.status)")
            #expect(r.stderr.contains("not a volume"), "\(bad): \(r.stderr)")
        }
        r = try run(tonearm, ["volume"], environment: ["PULSE_SERVER": "unix:\(server.directory)/no-such-socket"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot connect to the sound server"), "\(r.stderr)")
    }
}
