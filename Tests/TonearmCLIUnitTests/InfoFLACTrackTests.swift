// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI
import TonearmTestSupport

/// `tonearm info` lists a FLAC file's one track without FFmpeg (the Swift decoder reads the
/// file): the track it makes is the one FFmpeg's demuxer lists.
@Suite struct InfoFLACTrackTests {
    @Test func theTrackOfAFLACFileIsFFmpegs() async throws {
        let dir = try TempDir("info-flac-track")
        defer { dir.remove() }
        var files: [String] = []
        for (i, args) in [["-ac", "1"], ["-ac", "2", "-sample_fmt", "s16"], ["-ac", "2", "-ar", "96000"]].enumerated() {
            let path = dir.file("\(i).flac")
            try await Fixtures.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:a=0.3:d=1.3"] + args + ["-c:a", "flac", path])
            files.append(path)
        }
        let sox = dir.file("sox.flac")
        #expect(try await run("sox", ["-n", "-b", "24", "-r", "22050", "-c", "2", sox, "synth", "1.7", "pinknoise"]).status == 0)
        files.append(sox)
        // Cut short: the stated length is STREAMINFO's, as FFmpeg states it.
        let cut = dir.file("cut.flac")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: files[1]))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        files.append(cut)
        for path in files {
            let f = try AudioFile(path: path)
            #expect(f.isFLACWithoutPictures, "\(path)")
            let ffmpeg = try await Asset(url: URL(fileURLWithPath: path)).tracks
            #expect([InfoCommand.flacTrack(f)] == ffmpeg, "\(path)")
        }
    }
}
