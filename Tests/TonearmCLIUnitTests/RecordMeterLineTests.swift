// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI

/// `tonearm record`'s meter line on a terminal: redrawn with `\r`, it must stay on one line of
/// the terminal's width (a wrapped line would leave a copy above at every redraw), on 80 columns
/// and on narrower ones; piped, it keeps its full form.
@Suite struct RecordMeterLineTests {
    @Test func theMeterFitsTheTerminalItIsDrawnOn() throws {
        let stereo = try AudioRecorder(url: URL(fileURLWithPath: "/tmp/meter.wav"), settings: [:])
        let mono = try AudioRecorder(url: URL(fileURLWithPath: "/tmp/meter.m4a"), settings: [AVNumberOfChannelsKey: 1])
        let full = RecordCommand.meterLine(stereo, channels: 2)
        #expect(full.contains("L ▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯▯ -inf dB (peak -inf)") && full.contains("  R "), "\(full)")
        #expect(TextWidth.of(full) > 80, "the full line is wider than 80 columns: \(TextWidth.of(full))")
        for width in [200, 120, 80, 60, 40, 24, 10] {
            for (r, channels) in [(stereo, 2), (mono, 1)] {
                let line = RecordCommand.meterLine(r, channels: channels, width: width)
                #expect(TextWidth.of(line) <= width - 1, "\(width) columns: \(line)")
                #expect(line.hasPrefix("● 0:00.0"), "\(line)")
            }
        }
        let eighty = RecordCommand.meterLine(stereo, channels: 2, width: 80)
        #expect(eighty.contains("▯▯▯▯") && eighty.contains("(peak -inf)") && eighty.contains("  R "), "bars and peaks kept at 80: \(eighty)")
        #expect(RecordCommand.meterLine(stereo, channels: 2, width: 200) == full)
    }
}
