// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmTestSupport

/// `tonearm outputs`, `volume` and the completion of output names, with a private PulseAudio
/// server (two null sinks).
@Suite struct OutputsCLITests {
    /// An unknown name for `outputs --set` is a failure (status 1) that lists the outputs there
    /// are, in the one form, without the root's usage line.
    @Test func unknownOutputListsTheOutputs() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.pactl("load-module", "module-null-sink", "sink_name=second", "rate=48000")
        let r = try run(try tonearmBinary(), ["outputs", "--set", "nope"], environment: server.environment)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("tonearm: outputs: no output named 'nope'; outputs: "), "\(r.stderr)")
        #expect(r.stderr.contains(server.sinkName) && r.stderr.contains("second"), "\(r.stderr)")
        #expect(!r.stderr.contains("Usage"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        let volume = try run(try tonearmBinary(), ["volume", "50", "--device", "nope"], environment: server.environment)
        #expect(volume.status == 1 && volume.stderr.hasPrefix("tonearm: "), "\(volume.stderr)")
    }

    /// Tab after `--device` and `outputs --set` offers the sound server's outputs.
    @Test func completesOutputNames() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.pactl("load-module", "module-null-sink", "sink_name=second", "rate=48000")
        let dir = try TempDir("complete-outputs")
        defer { dir.remove() }
        let complete = try HelpTests.bashCompletion(in: dir, environment: server.environment)
        #expect(try complete(["tonearm", "play", "--device", ""]).sorted() == [server.sinkName, "second"].sorted())
        #expect(try complete(["tonearm", "outputs", "--set", "sec"]) == ["second"])
        #expect(try complete(["tonearm", "volume", "--device", ""]).contains("second"))
    }
}
