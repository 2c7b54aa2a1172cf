// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// The daemon's web remote (issue 21) in a real browser: `tonearm daemon --http 127.0.0.1:0`
/// with the null output playing two tagged songs, the page opened in Debian's headless chromium
/// (python3-selenium, chromium-driver; `webremote.py` in TonearmTestSupport): the title shows the
/// song; Next, Pause and the seek bar, pressed by their accessible names, change what mpc sees;
/// play, prev, random and volume given with mpc appear on the page, pushed over its WebSocket;
/// Remove takes a song off the queue; the library's search in Chinese finds a song, Play next and
/// Move up place it, artists → album → Add adds one, a song's stars set its rating (mpc reads the
/// `rating` sticker) and a rating set with mpc is pushed back, Save queue / Clear queue / Load playlist go
/// round a stored playlist, a song dragged onto another takes its place. Screenshots at 375 and 1280 px wide are kept in
/// `.build/test-artifacts/`. And a network stream's buffered part under the seek bar, growing as it arrives.
struct WebRemoteBrowserTests {
    @Test func thePageDrivesTheDaemonAndFollowsMPC() throws {
        let dir = try TempDir("web-remote")
        defer { dir.remove() }
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        for (file, title, artist) in [("one.flac", "Song One", "Artist A"), ("two.flac", "Song Two", "Artist B"), ("qt.flac", "晴天", "周杰伦")] {
            try Fixtures.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=40", "-metadata", "title=\(title)",
                                 "-metadata", "artist=\(artist)", "-metadata", "album=The Album", music + "/" + file])
        }
        let daemon = try DaemonProcess(dir, music: music, options: ["--http", "127.0.0.1:0"])
        defer { daemon.process.terminate(SIGKILL) }
        #expect(daemon.process.waitForStandardError(containing: "web remote on http://127.0.0.1:", timeout: 30), "\(daemon.process.standardErrorText)")
        let log = daemon.process.standardErrorText
        let port = try #require(log.components(separatedBy: "web remote on http://127.0.0.1:").dropFirst().first?.prefix { $0.isNumber })
        _ = try daemon.mpc("add", music + "/one.flac")
        _ = try daemon.mpc("add", music + "/two.flac")
        _ = try daemon.mpc("play")

        let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts").path
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let browser = try run("/usr/bin/python3", [webRemoteBrowserScript, "http://127.0.0.1:\(port)/", artifacts],
                              environment: ["MPD_HOST": daemon.socket, "HOME": dir.path])
        #expect(browser.status == 0 && browser.stdout.contains("PASS\n"), "\(browser.stdout)\n\(browser.stderr.suffix(3000))")
        // What the page left, as mpc sees it: the playlist it saved, loaded, Top Rated added, shuffle on, volume 35.
        let status = try daemon.mpc("status")
        #expect(status.contains("volume: 35%") && status.contains("random: on"), "\(status)")
        #expect(try daemon.mpc("-f", "%title%", "playlist") == "Song Two\n晴天\nSong One\nSong Two\n")
        #expect(try daemon.mpc("lsplaylists").contains("Web mix"))
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }

    /// A stream's buffered part (issue 21): the daemon plays a 24 s FLAC (noise, so that it is
    /// large) from a real HTTP server on 127.0.0.1 throttled to a sixtieth of it a second; the
    /// page (`webbuffered.py` in chromium) draws the part that has arrived as a line under the
    /// seek bar — from the start, short of the end; the script then lets the server send faster
    /// and the line grows as the daemon pushes more; unthrottled, it is the whole bar — and names
    /// it ("Buffered 0:00–0:24"). The script changes the server's rate itself, once the page has
    /// shown each step: no step depends on how fast the browser starts.
    @Test func aStreamsBufferedPartIsDrawnUnderTheSeekBar() throws {
        let dir = try TempDir("web-buffered")
        defer { dir.remove() }
        let served = dir.file("served")
        try FileManager.default.createDirectory(atPath: served, withIntermediateDirectories: true)
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=d=24:a=0.3", "-ar", "44100", "-metadata", "title=Stream Song",
                             served + "/stream.flac"])
        let size = try #require(FileManager.default.attributesOfItem(atPath: served + "/stream.flac")[.size] as? Int)
        let server = try PrivateHTTPServer(root: served)
        defer { server.stop() }
        try server.setRate(size / 60)
        let music = dir.file("music")
        try FileManager.default.createDirectory(atPath: music, withIntermediateDirectories: true)
        let daemon = try DaemonProcess(dir, music: music, options: ["--http", "127.0.0.1:0"])
        defer { daemon.process.terminate(SIGKILL) }
        #expect(daemon.process.waitForStandardError(containing: "web remote on http://127.0.0.1:", timeout: 30), "\(daemon.process.standardErrorText)")
        let port = try #require(daemon.process.standardErrorText.components(separatedBy: "web remote on http://127.0.0.1:").dropFirst().first?.prefix { $0.isNumber })
        _ = try daemon.mpc("add", server.url("/stream.flac").absoluteString)
        _ = try daemon.mpc("play")

        let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/test-artifacts").path
        try FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
        let browser = try run("/usr/bin/python3", [webBufferedBrowserScript, "http://127.0.0.1:\(port)/", artifacts,
                                                   server.baseURL.absoluteString, String(size / 8)],
                              environment: ["HOME": dir.path])
        #expect(browser.status == 0 && browser.stdout.contains("PASS\n"), "\(browser.stdout)\n\(browser.stderr.suffix(3000))")
        // One download: the server saw one request for the song (no re-fetch for the page).
        #expect(server.requests().filter { $0.path == "/stream.flac" }.count == 1, "\(server.requests())")
        #expect(daemon.stop(), "\(daemon.process.standardErrorText)")
    }
}
