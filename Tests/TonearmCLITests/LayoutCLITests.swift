// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmTestSupport

/// Channel layouts as a user sees them: `tonearm info` names the file's layout, and
/// `tonearm play --output file:` writes a WAV that says the layout it played.
@Suite(.offThePool, .serialized) struct LayoutCLITests {
    let dir: TempDir
    init() throws {
        dir = try TempDir("cli-layout")
        setenv("XDG_STATE_HOME", dir.file("state"), 1)
    }

    @Test(arguments: [("5.1", "flac"), ("5.1(side)", "wav"), ("7.1", "flac"), ("quad", "flac"), ("2.1", "wav")])
    func infoNamesTheLayoutAndPlayingToAFileKeepsIt(name: String, ext: String) throws {
        let layout = try #require(AudioChannelLayout(named: name))
        let src = dir.file("\(name).\(ext)")
        let exprs = (0..<layout.channelCount).map { "0.1*sin(2*PI*\(300 + 100 * $0)*t)" }.joined(separator: "|")
        try Fixtures.ffmpeg(["-f", "lavfi", "-i", "aevalsrc=exprs=\(exprs):c=\(name):s=48000:d=0.3",
                             "-c:a", ext == "wav" ? "pcm_s16le" : "flac", src])
        let info = try run(try tonearmBinary(), ["info", src])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains(" · \(name) · "), "\(info.stdout)")
        let out = dir.file("\(name)-out.wav")
        let r = try run(try tonearmBinary(), ["play", "--output", "file:\(out)", src])
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=channel_layout", "-of", "csv=p=0", out])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == name)
    }

    /// A WAV without a channel mask (plain PCM format, 6 channels) has no layout of its own:
    /// `info` says how it is played (FFmpeg's default for the count), and the file output says so.
    @Test func aWAVWithoutAMaskSaysWhichLayoutItIsPlayedAs() throws {
        let src = dir.file("nomask.wav")
        try writeWAV16(src, channels: (0..<6).map { sineWave(frequency: 300 + 100 * Double($0), amplitude: 0.1,
                                                                seconds: 0.3, sampleRate: 48000) }, sampleRate: 48000)
        let info = try run(try tonearmBinary(), ["info", src])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains(" · 6 channels (played as 5.1) · "), "\(info.stdout)")
        let stereo = dir.file("nomask2.wav")
        try writeWAV16(stereo, channels: [[0, 0.1], [0.1, 0]], sampleRate: 48000)
        #expect(try run(try tonearmBinary(), ["info", stereo]).stdout.contains(" · stereo · "))
        let out = dir.file("nomask-out.wav")
        #expect(try run(try tonearmBinary(), ["play", "--output", "file:\(out)", src]).status == 0)
        let probe = try run("ffprobe", ["-v", "error", "-show_entries", "stream=channel_layout", "-of", "csv=p=0", out])
        #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "5.1")
    }
}
