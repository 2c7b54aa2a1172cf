// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm play http://…/clip.mp4 --video-output …` against the tests' HTTP server on
/// 127.0.0.1 (issue 19): the picture of a progressive download is decoded on a download of its
/// own and shown against the sound — ffmpeg's frames, in order — with the moov atom first or
/// last, from a server that takes ranges and from one that does not (a bounded number of
/// requests). Real time: run one at a time.
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
        // Two downloads (the sound's and the picture's), each a few requests: never a storm.
        let requests = server.requests(path: "/\(name)").count
        #expect(requests >= 2 && requests <= 8, "\(requests) requests")
    }
}
