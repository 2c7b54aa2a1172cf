// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import SeedPorts
import Testing
import TonearmCompat
import TonearmTestSupport

/// Seed 003's extraction of a video's sound, ported with Apple's names: every audio track goes
/// into an AVMutableComposition, which is exported with the passthrough preset to a CAF file.
/// The file holds the video's AAC packets unchanged (FFmpeg's packet digests are equal), and
/// is as long as the video's audio; a video without sound calls the failure handler.
@Suite struct Seed003Tests {
    /// The packets of the first audio stream, as "size,md5" (FFmpeg's framemd5).
    func packetDigests(_ path: String) throws -> [String] {
        let r = try run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-c", "copy", "-f", "framemd5", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return "\(f[4]),\(f[5])"
        }
    }

    func duration(_ path: String) throws -> Double {
        let r = try run("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=codec_name,duration",
                                    "-of", "default=nw=1", path])
        let fields = Dictionary(uniqueKeysWithValues: r.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
            let kv = line.split(separator: "=", maxSplits: 1).map(String.init)
            return kv.count == 2 ? (kv[0], kv[1]) : nil
        })
        #expect(fields["codec_name"] == "aac", "\(r.stdout)")
        return Double(fields["duration"] ?? "") ?? -1
    }

    /// What `extractAudio` calls back with.
    func extract(_ video: String, into folder: String) async throws -> Result<URL, any Error> {
        let (results, sink) = AsyncStream<Result<URL, any Error>>.makeStream()
        extractAudio(fromVideo: URL(fileURLWithPath: video), into: URL(fileURLWithPath: folder),
                     callback: { sink.yield(.success($0)) }, failure: { sink.yield(.failure($0)) })
        return try await waitForEvent(results, timeout: 30, "the export's callback") { _ in true }
    }

    @Test func theVideosSoundIsExtractedPacketForPacket() async throws {
        let dir = try TempDir("seed003")
        defer { dir.remove() }
        let video = dir.file("clip.mp4")
        try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x64:rate=10:d=2",
                                   "-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=48000",
                                   "-map", "0:v", "-map", "1:a", "-ac", "2", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "128k", video])
        let url = try await extract(video, into: dir.path).get()
        #expect(url.pathExtension == "caf")
        #expect(FileManager.default.fileExists(atPath: url.path))
        let source = try packetDigests(video), extracted = try packetDigests(url.path)
        #expect(source.count > 90)
        #expect(extracted == source)
        #expect(abs(try duration(url.path) - duration(video)) < 0.03)
    }

    @Test func aVideoWithoutSoundFails() async throws {
        let dir = try TempDir("seed003-silent")
        defer { dir.remove() }
        let video = dir.file("silent.mp4")
        try Fixtures.videoOnly(path: video, seconds: 1)
        let result = try await extract(video, into: dir.path)
        guard case .failure(let error) = result else { Issue.record("a video without sound was extracted"); return }
        #expect((error as NSError).domain == "提取音频失败")
    }
}
