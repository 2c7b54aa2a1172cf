// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
@testable import TonearmDaemon
import TonearmMPDProtocol
import TonearmPlayback
import TonearmRender
import TonearmSession
import TonearmTestSupport
@testable import TonearmWeb

/// The page's outputs against a private PulseAudio server (checked with `pactl`): the system
/// volume of the sound device is listed, set by the page (`systemvolume`, the `player`
/// permission as `setvol`), and a change made with `pactl` is pushed to an open page; "Play
/// only on" one output is a command list that enables it and disables the others.
@Suite(.serialized) struct WebSystemVolumeTests {
    static let client = MPDClientContext(isLocal: true)

    @Test func theSystemVolumeIsReadSetAndFollowed() async throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1", systemVolume: SystemVolume(server: server.serverString))
        try server.pactl("set-sink-volume", "test_null", "40%")
        #expect(try await remote.outputs(permissions: .all).systemVolume == 40)
        try await remote.perform(.systemVolume(65), permissions: .all)
        #expect(try server.volumePercents("test_null") == [65, 65])
        // Without `player`, as `setvol`.
        await #expect(throws: WebCommandFailure.self) { try await remote.perform(.systemVolume(10), permissions: [.read]) }
        #expect(try server.volumePercents("test_null") == [65, 65])

        let pump = Task { await remote.pumpChanges() }
        defer { pump.cancel() }
        let (page, feed) = await remote.subscribePage(permissions: .all)
        defer { remote.unsubscribePage(page) }
        let (messages, sink) = AsyncStream<String>.makeStream()
        let reader = Task { for await m in feed { sink.yield(m) }; sink.finish() }
        defer { reader.cancel() }
        _ = try await waitForEvent(messages, "the first outputs") { $0.contains(#""type":"outputs""#) && $0.contains(#""systemVolume":65"#) }
        // Changed by a desktop mixer once the pump listens (it follows the volume before it
        // subscribes to the daemon's hub): pushed, no polling.
        let hub = daemon.hub
        try await withDeadline(10, "the pump's subscription") { while hub.count == 0 { await Task.yield() } }
        try server.pactl("set-sink-volume", "test_null", "30%")
        _ = try await waitForEvent(messages, "pactl's change pushed") { $0.contains(#""type":"outputs""#) && $0.contains(#""systemVolume":30"#) }
        #expect(throws: WebRequestError.self) { try WebCommand(json: Array(#"{"command":"systemvolume","value":101}"#.utf8)) }
        #expect(try WebCommand(json: Array(#"{"command":"systemvolume","value":20}"#.utf8)) == .systemVolume(20))
    }

    /// "Play only on" an output: it is enabled and the others disabled, as `mpc enable only`.
    @Test func playbackMovesToOneOutput() async throws {
        let daemon = MPDDaemon(player: MusicPlayer(output: { NullOutput() }, session: nil))
        daemon.setListedOutputs([MPDOutput(name: "a", plugin: "null"), MPDOutput(name: "b", plugin: "null"), MPDOutput(name: "c", plugin: "null")])
        let remote = try WebRemote(daemon: daemon, host: "127.0.0.1")
        try await remote.perform(.onlyOutput(1), permissions: .all)
        #expect(try await remote.outputs(permissions: .all).outputs.map(\.enabled) == [false, true, false])
        try await remote.perform(.onlyOutput(2), permissions: .all)
        #expect(try await remote.outputs(permissions: .all).outputs.map(\.enabled) == [false, false, true])
        await #expect(throws: WebCommandFailure("ACK [50@0] {enableoutput} No such audio output")) {
            try await remote.perform(.onlyOutput(5), permissions: .all)
        }
        #expect(try WebCommand(json: Array(#"{"command":"onlyoutput","value":2}"#.utf8)) == .onlyOutput(2))
    }
}
