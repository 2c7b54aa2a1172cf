// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
@testable import TonearmOutput
import TonearmRender

/// Where a lost PulseAudio server's socket will appear again (what the return watch's inotify
/// wake-up watches), as libpulse finds the server; and which drivers can watch at all.
@Suite struct PulseServerAddressTests {
    @Test func theSocketComesFromTheServerStringFirst() {
        #expect(PulseOutput.socketPath(server: "unix:/run/user/1000/pulse/native", environment: [:])
            == "/run/user/1000/pulse/native")
        #expect(PulseOutput.socketPath(server: "/tmp/p/native", environment: ["PULSE_SERVER": "unix:/elsewhere"])
            == "/tmp/p/native")
        // A list: the first unix entry, a {machine-id} prefix ignored.
        #expect(PulseOutput.socketPath(server: "tcp:localhost {abc123}unix:/tmp/x/native", environment: [:]) == "/tmp/x/native")
        // TCP only: nothing to watch (the backoff alone finds it).
        #expect(PulseOutput.socketPath(server: "tcp:192.168.1.2:4713", environment: [:]) == nil)
    }

    @Test func withoutAServerStringTheEnvironmentSaysWhere() {
        #expect(PulseOutput.socketPath(server: nil, environment: ["PULSE_SERVER": "unix:/a/native"]) == "/a/native")
        #expect(PulseOutput.socketPath(server: nil, environment: ["PULSE_RUNTIME_PATH": "/r", "XDG_RUNTIME_DIR": "/x"])
            == "/r/native")
        #expect(PulseOutput.socketPath(server: nil, environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == "/run/user/7/pulse/native")
        #expect(PulseOutput.socketPath(server: nil, environment: [:]) == nil)
    }

    /// Only a lost server is watched for: a driver that never lost its connection (or lost only
    /// its stream) has nothing to wait for, and the built-in drivers never do.
    @Test func onlyALostServerIsWatchedFor() {
        #expect(PulseOutput(server: "unix:/nonexistent/native").watchForReturn {} == nil)
        #expect(NullOutput().watchForReturn {} == nil)
        #expect(FileOutput(path: "/tmp/never.wav").watchForReturn {} == nil)
    }
}
