// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
import TonearmOutput
@testable import TonearmPlayback
import TonearmTestSupport

/// The unplugged-headphones rule on a real PulseAudio server: when the output a queue plays to
/// goes away, the queue pauses (whether the server moves the stream elsewhere or drops it), and
/// `play()` goes on from the same place.
@Suite(.serialized) struct RouteLossTests {
    /// The server moves the stream of a removed sink to the default one (PulseAudio does that by
    /// itself since version 14, as PipeWire does); the driver tells the removal from a user's
    /// move and the queue pauses.
    @Test func removingTheOutputInUsePausesTheQueue() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("route-loss")
        defer { dir.remove() }
        let module = try server.pactl("load-module", "module-null-sink", "sink_name=phones", "rate=48000")
            .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let serverString = server.serverString
        let q = QueuePlayer(items: [QueueItem(path: try Fixtures.minuteOfTone(in: dir))], output: {
            PulseOutput(server: serverString, streamName: "route-loss", device: "phones")
        })
        defer { q.stop() }
        let events = q.events
        q.play()
        #expect(q.playbackState == .playing)
        q.seek(to: 5)
        #expect(try await waitForStreamOn("phones", server))
        try server.pactl("unload-module", module)
        let e = try await waitForEvent(events, timeout: 10, "the queue to notice") {
            if case .outputRemoved = $0 { return true }
            if case .outputLost = $0 { return true }
            return false
        }
        #expect(e == .outputRemoved(previous: "phones"))
        #expect(q.playbackState == .paused)
        let position = q.currentTime
        #expect(position >= 5 && position < 15, "paused at \(position) s")
        // Play goes on from the same place (on the default output now).
        q.play()
        #expect(q.playbackState == .playing)
        #expect(abs(q.currentTime - position) < 1, "resumed at \(q.currentTime) s, paused at \(position) s")
    }

    /// Headphones unplugged from the jack of the sink in use (its `device.form_factor` changes
    /// from headphones to speaker, as when the active port switches): the stream stays on the
    /// sink, the queue pauses all the same.
    @Test func unpluggingHeadphonesFromTheSinkInUsePausesTheQueue() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let dir = try TempDir("unplug")
        defer { dir.remove() }
        try server.pactl("load-module", "module-null-sink", "sink_name=jack", "rate=48000",
                         "sink_properties=\"device.description=Jack device.form_factor=headphones\"")
        let serverString = server.serverString
        let q = QueuePlayer(items: [QueueItem(path: try Fixtures.minuteOfTone(in: dir))], output: {
            PulseOutput(server: serverString, streamName: "unplug", device: "jack")
        })
        defer { q.stop() }
        let events = q.events
        q.play()
        #expect(try await waitForStreamOn("jack", server))
        try server.cli("update-sink-proplist jack device.form_factor=speaker")
        let e = try await waitForEvent(events, timeout: 10, "the queue to notice") {
            if case .outputRemoved = $0 { return true }
            if case .outputLost = $0 { return true }
            return false
        }
        #expect(e == .outputRemoved(previous: "jack"))
        #expect(q.playbackState == .paused)
        #expect(try await waitForStreamOn("jack", server), "the stream left the sink")
    }

    /// Waits (bounded, by asking the server on each new sink input event rather than sleeping)
    /// until a stream plays to `sink`.
    func waitForStreamOn(_ sink: String, _ server: PrivatePulseServer) async throws -> Bool {
        let follower = try ChildProcess(["pactl", "subscribe"], environment: server.environment, captureStandardOutput: true)
        defer { follower.terminate() }
        for _ in 0..<50 {
            let list = try server.pactl("list", "short", "sink-inputs").stdout
            let sinks = try server.pactl("list", "short", "sinks").stdout
            let index = sinks.split(separator: "\n").first { $0.split(separator: "\t").dropFirst().first == Substring(sink) }?
                .split(separator: "\t").first
            if let index, list.split(separator: "\n").contains(where: { $0.split(separator: "\t").dropFirst().first == index }) {
                return true
            }
            let seen = follower.standardOutputText.count
            _ = await follower.waitForStandardOutput(timeout: 0.5) { $0.text.count > seen }
        }
        return false
    }
}
