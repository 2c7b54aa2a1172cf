// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The live screen in a real pseudo-terminal (util-linux `script`): it draws, obeys keys, and
/// gives the terminal back. The screens (``PTYScreen``) keep the test's session bus, or the one a
/// command names.
@Suite struct LiveScreenTests {
    @Test func drawsObeysKeysAndRestoresTheTerminal() throws {
        let dir = try TempDir("tui")
        defer { dir.remove() }
        let a = dir.file("first.flac"), b = dir.file("second.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", "-metadata", "title=First Song",
                             "-metadata", "artist=The Testers", a])
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=660:duration=30", b])
        let screen = try PTYScreen("XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output null '\(a)' '\(b)'", sessionBus: true)
        try screen.waitFor("First Song")
        try screen.waitFor("The Testers")
        try screen.waitFor("▶ Playing")
        #expect(screen.all.contains("\u{1B}[?1049h"))  // alternate screen entered
        screen.type(" ")
        try screen.waitFor("⏸ Paused")
        screen.type("\u{1B}[B")  // ↓: volume 95 %
        try screen.waitFor("95%")
        screen.type("r")
        try screen.waitFor("Repeat: one")
        screen.type("s")
        try screen.waitFor("Shuffle: on")
        screen.type("s")
        try screen.waitFor("Shuffle: off")
        screen.type("e")
        try screen.waitFor("EQ: bass-boost")
        screen.type("]")
        try screen.waitFor("Speed: 1.1×")
        screen.type("n")
        try screen.waitFor("second.wav")
        try screen.waitFor("▶ 2. second.wav")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
        let out = screen.all
        // The terminal is handed back: alternate screen left and cursor shown, after the last frame.
        let restore = try #require(out.range(of: "\u{1B}[?25h\u{1B}[?1049l", options: .backwards))
        #expect(out[restore.upperBound...].contains("Tonearm") == false)
    }

    @Test func aSpeedSetOverMPRISIsShownAndQuitEndsThePlayer() throws {
        let bus = try PrivateDBus()
        defer { bus.stop() }
        let dir = try TempDir("tui-remote")
        defer { dir.remove() }
        let a = dir.file("long.flac")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", a])
        let screen = try PTYScreen("DBUS_SESSION_BUS_ADDRESS='\(bus.address)' XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output null '\(a)'", sessionBus: true)
        try screen.waitFor("▶ Playing")
        try screen.waitFor("Speed: 1.0×")
        func call(_ method: String, _ args: [String] = []) throws -> RunResult {
            try bus.client("dbus-send", ["--session", "--print-reply", "--dest=org.mpris.MediaPlayer2.tonearm",
                                         "/org/mpris/MediaPlayer2", method] + args)
        }
        let set = try call("org.freedesktop.DBus.Properties.Set", ["string:org.mpris.MediaPlayer2.Player", "string:Rate",
                                                                    "variant:double:1.5"])
        #expect(set.status == 0, "\(set.stderr)")
        try screen.waitFor("Speed: 1.5×")
        // The keys go on from the remote's speed.
        screen.type("]")
        try screen.waitFor("Speed: 1.6×")
        let quit = try call("org.mpris.MediaPlayer2.Quit")
        #expect(quit.status == 0, "\(quit.stderr)")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
        #expect(screen.all.contains("\u{1B}[?25h\u{1B}[?1049l"), "the terminal is handed back")
    }

    @Test func showsAndFollowsTheSystemVolume() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("tui-volume")
        defer { dir.remove() }
        let a = dir.file("long.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", a])
        try server.pactl("set-sink-volume", "test_null", "70%")
        let env = server.environment.map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
        let screen = try PTYScreen("\(env) XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output pulse '\(a)'", sessionBus: true)
        try screen.waitFor("▶ Playing")
        try screen.waitFor("70%   test_null")
        // Changed by someone else: the screen follows (from the server's events).
        try server.pactl("set-sink-volume", "test_null", "40%")
        try screen.waitFor("40%   test_null")
        try server.pactl("set-sink-mute", "test_null", "1")
        try screen.waitFor("40% (muted)")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)
    }

    @Test func aStreamShowsWhatIsInMemoryAndARadioItsTitle() throws {
        let dir = try TempDir("tui-stream")
        defer { dir.remove() }
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=60", "-c:a", "libmp3lame", "-b:a", "128k",
                             dir.file("long.mp3")])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        // Four times real time: the part in memory runs ahead of the playhead on the bar.
        let file = server.url("/long.mp3", query: ["rate": "64000"]).absoluteString
        let screen = try PTYScreen("XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output null '\(file)'", sessionBus: true)
        try screen.waitFor("▶ Playing")
        try screen.waitFor("1:00")
        try screen.waitFor("█▒")
        screen.type("q")
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 0)

        let radio = server.url("/radio", query: ["file": "long.mp3", "metaint": "8000", "titles": "On Air Now",
                                                 "rate": "20000"]).absoluteString
        let live = try PTYScreen("XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output null '\(radio)'", sessionBus: true)
        try live.waitFor("● LIVE")
        try live.waitFor("Title   On Air Now")
        live.type("q")
        live.process.waitUntilExit()
        #expect(live.process.terminationStatus == 0)
    }

    @Test func ctrlCQuitsWithStatus130AndRestoresTheTerminal() throws {
        let dir = try TempDir("tui-int")
        defer { dir.remove() }
        let a = dir.file("long.wav")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=30", a])
        let screen = try PTYScreen("XDG_STATE_HOME='\(dir.file("state"))' \(try tonearmBinary()) play --output null '\(a)'", sessionBus: true)
        try screen.waitFor("▶ Playing")
        screen.type("\u{03}")  // Ctrl-C through the terminal: SIGINT to the player
        screen.process.waitUntilExit()
        #expect(screen.process.terminationStatus == 130)
        #expect(screen.all.contains("\u{1B}[?25h\u{1B}[?1049l"))
    }
}
