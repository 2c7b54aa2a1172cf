// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm remote screen` (issue 20): the live play screen attached to a real daemon in a
/// pseudo-terminal of 80×24, CJK titles fitted; its keys carried out by the daemon (checked
/// with mpc after the screen showed the daemon's answer, which it learns from `idle`); `q`
/// leaves the daemon playing; a clear error when no daemon answers. Every wait is for output
/// or the exit, with a deadline.
@Suite(.serialized) struct RemoteScreenPTYTests {
    func q(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test func drivesTheDaemonFromTheLiveScreenAndQuitsLeavingItPlaying() throws {
        let dir = try TempDir("tonearm-remote-screen")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let long = "晴天 — 一首很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长的歌"
        for (name, title, artist) in [("1.flac", long, "周杰伦"), ("2.flac", "Second", "Somebody"), ("3.flac", "Third", "Somebody")] {
            try Fixtures.tone(path: music + "/" + name, codecArgs: ["-c:a", "flac", "-metadata", "title=\(title)", "-metadata", "artist=\(artist)"], seconds: 40)
        }
        let tonearm = try tonearmBinary()
        let xdg = dir.file("xdg")

        // No daemon: one line saying where it looked, status 69 (before the terminal is taken).
        let none = try PTYScreen("XDG_RUNTIME_DIR=\(q(xdg)) exec \(q(tonearm)) remote screen")
        #expect(try none.waitForExit() == 69)
        #expect(none.all.contains("tonearm: remote screen: no daemon at \(xdg)/tonearm/mpd.sock"), "\(none.all)")

        let daemon = try DaemonProcess(dir, music: music)
        defer { daemon.process.terminate(SIGKILL) }
        func mpc(_ args: String...) throws -> String { try daemon.mpc(args) }
        let hand = try run(tonearm, ["play", "--daemon", music], environment: ["XDG_RUNTIME_DIR": xdg])
        #expect(hand.status == 0, "\(hand)")
        _ = try mpc("volume", "50")

        let screen = try PTYScreen("stty rows 24 cols 80; XDG_RUNTIME_DIR=\(q(xdg)) exec \(q(tonearm)) remote screen")
        defer { screen.process.terminate() }
        try screen.waitForFrame(showing: " Title   晴天 — 一首")
        let lines = try PlayScreenPTYTests.lastFrame(screen.all)
        #expect(lines.count == 24, "\(lines)")
        for line in lines { #expect(PlayScreenPTYTests.columns(line) < 80, "\(line)") }
        #expect(lines.contains { $0.contains("▶ Playing") && $0.contains("output: daemon") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix(" Artist  周杰伦") }, "\(lines)")
        #expect(lines.contains { $0.contains("/ 0:40") }, "the progress bar: \(lines)")
        #expect(lines.contains { $0.contains("▶ 1. 晴天") }, "\(lines)")
        #expect(lines.contains { $0.contains("3. Third — Somebody") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix(" Volume  [") && $0.contains("50%") }, "\(lines)")

        // Each key: the screen shows the daemon's answer (from idle), then mpc sees the same.
        screen.type(" ")
        try screen.waitForFrame(showing: "⏸ Paused")
        #expect(try mpc("status").contains("[paused]"))
        screen.type(" ")
        try screen.waitForFrame(showing: "▶ Playing")
        screen.type("0")
        try screen.waitForFrame(showing: "55%")
        #expect(try mpc("volume") == "volume: 55%\n")
        screen.type("r")
        try screen.waitForFrame(showing: "Repeat: one")
        #expect(try mpc("status").contains("repeat: on    random: off   single: on"))
        screen.type("rr")
        try screen.waitForFrame(showing: "Repeat: off")
        screen.type("s")
        try screen.waitForFrame(showing: "Shuffle: on")
        #expect(try mpc("status").contains("random: on"))
        screen.type("s")
        try screen.waitForFrame(showing: "Shuffle: off")
        // Seek: two steps of 5 s on, from the daemon's time.
        screen.type("\u{1B}[C\u{1B}[C")
        try screen.waitForFrame(showing: "] 0:1")
        let position = try mpc("-f", "", "status")
        #expect(position.contains("/0:40"), "\(position)")
        // The queue: the cursor on the current song, down to Second, removed; Third moved up.
        screen.type("\t")
        try screen.waitForFrame(showing: "Queue (3) — browsing")
        screen.type("jd")
        try screen.waitForFrame(showing: "Queue (2) — browsing")
        #expect(try mpc("-f", "%title%", "playlist") == "\(long)\nThird\n")
        screen.type("K")
        try screen.waitForFrame(showing: "▶ 2. 晴天")
        #expect(try mpc("-f", "%title%", "playlist") == "Third\n\(long)\n")
        screen.type("\r")  // play the song under the cursor: Third
        try screen.waitForFrame(showing: " Title   Third")
        #expect(try mpc("-f", "%title%", "current") == "Third\n")
        screen.type("\tn")  // out of the queue; next
        try screen.waitForFrame(showing: " Title   晴天")
        screen.type("p")
        try screen.waitForFrame(showing: " Title   Third")
        // A change made by another client shows without a key.
        _ = try mpc("volume", "20")
        try screen.waitForFrame(showing: "20%")
        screen.type("q")
        #expect(try screen.waitForExit() == 0, "\(screen.all.suffix(400))")
        #expect(try mpc("status").contains("[playing] #1/2"), "quitting leaves the daemon playing")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}
