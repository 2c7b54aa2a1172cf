// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play http://…/clip.mp4 --video-output …` against the tests' HTTP server on
/// 127.0.0.1 (issue 19): the picture of a progressive download is decoded from the sound's
/// download (the file is sent once) and shown against the sound — ffmpeg's frames, in order —
/// with the moov atom first or last, from a server that takes ranges and from one that does not
/// (a bounded number of requests). Real time: run one at a time.
@Suite(.serialized) final class NetworkVideoCLITests: Sendable {
    let dir: TempDir
    init() throws { dir = try TempDir("network-video-cli") }
    deinit { dir.remove() }

    var environment: [String: String] {
        ["XDG_STATE_HOME": dir.file("state"), "XDG_CONFIG_HOME": dir.file("config"), "XDG_DATA_HOME": dir.file("data")]
    }

    /// A 2 s clip with sound, its moov atom first (`+faststart`) or last (ffmpeg's default).
    func makeClip(moovFirst: Bool) throws -> String {
        let last = dir.file("last.mp4")
        try VideoFixtures.clip(last, seconds: 2)
        guard moovFirst else { return last }
        let first = dir.file("first.mp4")
        try Fixtures.ffmpeg(["-i", last, "-c", "copy", "-movflags", "+faststart", first])
        return first
    }

    @Test(arguments: [(true, false), (false, false), (false, true)])
    func theFramesShownAreFFmpegsInOrderWithTheSound(moovFirst: Bool, noRange: Bool) throws {
        defer { dir.remove() }
        let clip = try makeClip(moovFirst: moovFirst)
        let name = (clip as NSString).lastPathComponent
        let expected = try VideoFixtures.frameMD5s(clip)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let url = server.url("/\(name)", query: noRange ? ["norange": "1"] : [:]).absoluteString
        let y4m = dir.file("shown.y4m")
        let r = try run(try tonearmBinary(), ["play", url, "--video-output", "file:\(y4m)", "--output", "null", "--plain"],
                        environment: environment)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        // The sound is there beside the picture.
        #expect(r.stdout.contains("AAC"), "\(r.stdout)")
        let summary = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("Video: ") }, "\(r.stdout)\n\(r.stderr)")
        let numbers = summary.split(whereSeparator: { " ,:".contains($0) }).compactMap { Double($0) }
        try #require(numbers.count == 3, "\(summary)")
        let (shown, dropped) = (Int(numbers[0]), Int(numbers[1]))
        #expect(shown + dropped == expected.count, "\(summary)")
        #expect(shown > 0, "\(summary)")
        // The file holds the frames shown: ffmpeg's, in order, none twice.
        let written = try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
        #expect(written.count == shown)
        var next = expected.startIndex
        for h in written {
            guard let i = expected[next...].firstIndex(of: h) else {
                Issue.record("a frame out of order or not ffmpeg's")
                break
            }
            next = i + 1
        }
        // One download for the sound and the picture, a few requests: never a storm.
        let requests = server.requests(path: "/\(name)")
        #expect(requests.count >= 1 && requests.count <= 4, "\(requests.count) requests")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: clip)[.size] as? Int)
        let served = requests.reduce(0) { $0 + $1.bytes }
        #expect(served <= size + size / 10, "the file is sent once: \(served) bytes of \(size)")
    }

    /// `tonearm play URL` without `--video-output`, as a local video: under Xvfb a URL whose
    /// content has video opens its window by itself (titled with the file name, the picture on
    /// the screen) and q in it ends the command; `--no-video` gives the sound only (no window);
    /// a URL of sound only opens none; without a display the sound plays and the command says
    /// so once. Before, a URL played its sound only unless `--video-output window` was given.
    @Test func aURLWithVideoOpensItsWindowByItselfWhenADisplayIsThere() async throws {
        defer { dir.remove() }
        try VideoFixtures.colorClip(dir.file("red.mp4"), colors: ["red"], segment: 20)
        try VideoFixtures.colorClip(dir.file("short.mp4"), colors: ["red"], segment: 1)
        try Fixtures.tone(path: dir.file("tone.m4a"), codecArgs: ["-c:a", "aac"], seconds: 1)
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let display = try VirtualDisplay(width: 640, height: 480)
        defer { display.stop() }
        var env = environment.merging(display.childEnvironment) { $1 }
        env["PULSE_SERVER"] = "unix:\(dir.file("no-pulse"))"
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(dir.file("no-bus"))"
        let child = try ChildProcess([try tonearmBinary(), "play", "--plain", "--output", "null", server.url("/red.mp4").absoluteString],
                                     environment: env, captureStandardError: true, captureStandardOutput: true)
        defer { child.terminate() }
        let shown = await child.waitForStandardOutput(timeout: 60) { $0.text.contains("Video: the first frame shown") || $0.childEnded }
        #expect(shown, "no window showed a frame: \(child.standardOutputText) \(child.standardErrorText)")
        #expect(child.standardOutputText.contains("window of 160×90"), "\(child.standardOutputText)")
        let shot = try display.screenshot()
        var red = 0
        for y in 0..<shot.height { for x in 0..<shot.width where shot.color(x: x, y: y).isClose(to: .init(r: 255, g: 0, b: 0)) { red += 1 } }
        #expect(red >= 160 * 90 * 9 / 10 && red <= 160 * 90, "\(red) red pixels on the screen; the window holds 160×90")
        try display.send(toWindowTitled: "red.mp4", ["key:q"])
        #expect(await child.waitForExit(timeout: 20), "q in the window did not end the command")
        #expect(child.succeeded, "status \(child.status ?? -1): \(child.standardErrorText)")
        #expect(server.requests(path: "/red.mp4").count <= 4, "the picture reads the sound's download")

        // --no-video: the sound to the end, no window.
        let n = try await run(try tonearmBinary(), ["play", "--plain", "--output", "null", "--no-video", server.url("/short.mp4").absoluteString],
                              environment: env)
        #expect(n.status == 0, "\(n.stdout)\n\(n.stderr)")
        #expect(!n.stdout.contains("Video:") && !n.stdout.contains("no display"), "\(n.stdout)")
        #expect(n.stdout.contains("Done: 1 played"), "\(n.stdout)")
        // Sound only: no window, no word about the picture.
        let a = try await run(try tonearmBinary(), ["play", "--plain", "--output", "null", server.url("/tone.m4a").absoluteString],
                              environment: env)
        #expect(a.status == 0, "\(a.stdout)\n\(a.stderr)")
        #expect(!a.stdout.contains("Video:") && !a.stdout.contains("sound only"), "\(a.stdout)")
        // No display: the sound, said once.
        var none = env
        none["DISPLAY"] = ""
        let d = try await run(try tonearmBinary(), ["play", "--plain", "--output", "null", server.url("/short.mp4").absoluteString],
                              environment: none)
        #expect(d.status == 0, "\(d.stdout)\n\(d.stderr)")
        #expect(d.stdout.components(separatedBy: "no display: playing the sound only").count == 2, "\(d.stdout)")
        #expect(!d.stdout.contains("Video:"), "\(d.stdout)")
    }
}

extension NetworkVideoCLITests {
    /// `tonearm play http://…/master.m3u8 --video-output file:OUT.y4m` with an HLS stream whose
    /// two variants carry video at different sizes: the stream starts on the lower variant and
    /// switches up after its first segment (127.0.0.1 is fast); the file holds ffmpeg's decode of
    /// the segments fetched one after another — the frames after the switch scaled to the first
    /// size as ffmpeg scales them — every frame shown, in order, each segment fetched once for the
    /// sound and the picture. Before, an HLS stream played its sound only.
    @Test func anHLSStreamsPictureGoesOnAcrossAVariantSwitch() throws {
        defer { dir.remove() }
        try VideoFixtures.hls(in: dir.path, sizes: [(320, 180), (160, 90)])
        let server = try PrivateHTTPServer(root: dir.path)
        defer { server.stop() }
        let y4m = dir.file("shown.y4m")
        let r = try run(try tonearmBinary(), ["play", server.url("/master.m3u8").absoluteString, "--video-output", "file:\(y4m)",
                                              "--output", "null", "--plain"], environment: environment)
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let segments = server.requests().map(\.path).filter { $0.hasSuffix(".ts") }
        #expect(segments == ["/v1/seg0.ts", "/v0/seg1.ts", "/v0/seg2.ts"], "low first, then up, each once: \(segments)")
        // ffmpeg's frames of the same segments, one after another.
        var bytes = Data()
        for s in segments { bytes += try Data(contentsOf: URL(fileURLWithPath: dir.file(String(s.dropFirst())))) }
        try bytes.write(to: URL(fileURLWithPath: dir.file("fetched.ts")))
        let expected = try VideoFixtures.frameMD5s(dir.file("fetched.ts"))
        let summary = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("Video: ") }, "\(r.stdout)\n\(r.stderr)")
        let numbers = summary.split(whereSeparator: { " ,:".contains($0) }).compactMap { Double($0) }
        try #require(numbers.count == 3, "\(summary)")
        #expect(Int(numbers[0]) + Int(numbers[1]) == expected.count, "\(summary)")
        let written = try VideoFixtures.y4mFrames(y4m).map(FrameMD5.hex)
        #expect(written.count == Int(numbers[0]) && written.count > 100, "\(summary)")
        var next = expected.startIndex
        for h in written {
            guard let i = expected[next...].firstIndex(of: h) else {
                Issue.record("a frame out of order or not ffmpeg's")
                break
            }
            next = i + 1
        }
    }
}
