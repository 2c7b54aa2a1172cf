// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import Tonearm
@testable import TonearmCLI

/// What `tonearm` registers at start-up: PulseAudio as an output driver and as the engine's
/// input driver, so that an engine made by any command can play and capture.
@Suite struct DriverRegistrationTests {
    @Test func theProgramRegistersPulseAudioForOutputAndInput() throws {
        TonearmCommand.registerDrivers()
        #expect(InputDriverRegistry.shared.hasDriver)
        let input = try InputDriverRegistry.shared.makeDriver()
        #expect(input.name == "pulse" && input is PulseInput)
    }
}
