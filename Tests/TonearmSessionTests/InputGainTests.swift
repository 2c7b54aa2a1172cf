// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization
import Testing
import TonearmCore
import TonearmSession
import TonearmTestSupport

/// The input's gain and mute and the record permission (issue 22) against a private PulseAudio
/// server, checked with `pactl`: the session's input is the preferred one, else the default;
/// the gain set is the source's volume (what mixers show), keeping the channels' balance; the
/// permission is undetermined until asked, granted when the server has an input, denied
/// without a server.
@Suite(.serialized) struct InputGainTests {
    /// `pactl get-source-volume`'s percentages, one per channel.
    static func percents(_ server: PrivatePulseServer, _ source: String) throws -> [Int] {
        let first = try server.pactl("get-source-volume", source).stdout.split(separator: "\n").first.map(String.init) ?? ""
        return first.split(separator: "/").compactMap { part -> Int? in
            let t = part.trimmingCharacters(in: .whitespaces)
            return t.hasSuffix("%") ? Int(t.dropLast()) : nil
        }
    }

    @Test func gainAndMuteAreTheInputsAndThePermissionIsTheServers() throws {
        let server = try PrivatePulseServer()
        defer { server.stop() }
        try server.loadInput("mic", description: "Mic", properties: "device.form_factor=microphone")
        try server.loadInput("usbmic", description: "USB_Mic", properties: "device.bus=usb")
        _ = try server.pactl("set-default-source", "mic")
        let session = AudioSession(identifier: "gain-test", bus: .none, pulseServer: server.serverString)
        #expect(session.isInputGainSettable)
        try server.pactl("set-source-volume", "mic", "40%")
        #expect(abs(try session.inputGain - 0.40) < 0.01)
        try session.setInputGain(0.7)
        #expect(try Self.percents(server, "mic") == [70])
        #expect(try Self.percents(server, "usbmic") == [100], "only the input in use")
        // The preferred input is the one in use.
        let usb: AudioInputRoute = try #require(try session.availableInputs.first { $0.name == "usbmic" })
        try session.setPreferredInput(usb)
        try session.setInputGain(0.25)
        #expect(try Self.percents(server, "usbmic") == [25] && Self.percents(server, "mic") == [70])
        try session.setInputMuted(true)
        #expect(try session.isInputMuted)
        #expect(try server.pactl("get-source-mute", "usbmic").stdout.contains("yes"))
        try session.setInputMuted(false)
        #expect(try !session.isInputMuted)
        #expect(throws: TonearmError.self) { try session.setInputGain(.nan) }
        try session.setInputGain(3)
        #expect(try Self.percents(server, "usbmic") == [100], "clamped to 100 %")

        #expect(session.recordPermission == .undetermined)
        let answer = Mutex<Bool?>(nil)
        session.requestRecordPermission { granted in answer.withLock { $0 = granted } }
        #expect(answer.withLock { $0 } == true && session.recordPermission == .granted)

        let nowhere = AudioSession(identifier: "gain-nowhere", bus: .none, pulseServer: "unix:/nonexistent/native")
        nowhere.requestRecordPermission { _ in }
        #expect(nowhere.recordPermission == .denied)
        #expect(!nowhere.isInputGainSettable)
        #expect(throws: TonearmError.self) { _ = try nowhere.inputGain }
    }
}
