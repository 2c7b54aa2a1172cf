// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
import TonearmTestSupport

/// The null and file outputs keep the layout they were opened with; a WAV written by the file
/// output says it (WAVE_FORMAT_EXTENSIBLE's channel mask), as ffprobe reads it.
@Suite struct OutputLayoutTests {
    @Test func theNullOutputKeepsTheLayout() throws {
        let out = NullOutput()
        let f = AudioFormat(sampleRate: 48_000, channelCount: 6, isInterleaved: true, channelLayout: .fivePointOneSide)
        try out.open(format: f)
        defer { out.close() }
        #expect(out.format.channelLayout == .fivePointOneSide)
    }

    /// Writes `frames` of noise in `layout` and returns the file ffprobe's channel layout for it.
    static func write(layout: AudioChannelLayout?, channels: Int, sampleFormat: FileOutput.SampleFormat,
                      in dir: TempDir) async throws -> (layout: String, wav: WAVContents) {
        let path = dir.file("out-\(channels)-\(layout?.description ?? "none")-\(sampleFormat).wav")
        let out = FileOutput(path: path, sampleFormat: sampleFormat, blockFrames: 1_000)
        try out.open(format: AudioFormat(sampleRate: 48_000, channelCount: channels, isInterleaved: true,
                                         channelLayout: layout))
        #expect(out.format.channelLayout == layout)
        let events = EventRecorder(out.events)
        try out.start(source: NoiseSource(channels: channels, totalFrames: 4_801))
        #expect(await events.wait(timeout: 20) { $0 == .drained })
        out.close()
        let probe = try await run("ffprobe", ["-v", "error", "-show_entries", "stream=channel_layout,channels",
                                              "-of", "csv=p=0", path])
        try #require(probe.status == 0, "ffprobe: \(probe.stderr)")
        let fields = probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",", omittingEmptySubsequences: false)
        #expect(fields.first.map(String.init) == "\(channels)")
        return (fields.count > 1 ? String(fields[1]) : "", try readWAV(path))
    }

    @Test(arguments: ["5.1", "5.1(side)", "7.1", "quad", "2.1", "6.1", "5.0"])
    func theWrittenWAVSaysItsLayout(name: String) async throws {
        let dir = try TempDir("file-layout")
        defer { dir.remove() }
        let layout = try #require(AudioChannelLayout(named: name))
        for sampleFormat in [FileOutput.SampleFormat.float32, .int16] {
            let (probed, wav) = try await Self.write(layout: layout, channels: layout.channelCount,
                                                     sampleFormat: sampleFormat, in: dir)
            #expect(probed == name, "\(sampleFormat)")
            #expect(wav.frameCount == 4_801 && wav.channelCount == layout.channelCount)
            let expected = NoiseSource.expected(channels: layout.channelCount, totalFrames: 4_801)
            if sampleFormat == .float32 {
                #expect(wav.formatTag == 3 && wav.channels[layout.channelCount - 1][4_800] == expected.last)
            } else {
                #expect(wav.formatTag == 1 && wav.bitsPerSample == 16)
            }
        }
    }

    @Test func sixChannelsWithoutALayoutAreWrittenAsFFmpegsDefault() async throws {
        let dir = try TempDir("file-layout")
        defer { dir.remove() }
        let (probed, _) = try await Self.write(layout: nil, channels: 6, sampleFormat: .float32, in: dir)
        #expect(probed == AudioChannelLayout.defaultLayout(channelCount: 6)?.name)
    }
}
