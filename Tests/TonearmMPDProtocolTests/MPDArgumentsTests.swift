// SPDX-License-Identifier: GPL-3.0-or-later
import Testing
import TonearmMPDProtocol

/// Arguments read as MPD reads them, with its messages.
@Suite struct MPDArgumentsTests {
    @Test func unsignedNumbers() throws {
        #expect(try MPDArguments.unsigned("42", max: 100) == 42)
        #expect(try MPDArguments.unsigned("+7") == 7)
        #expect(throws: MPDArgumentError("Integer expected: 1.5")) { try MPDArguments.unsigned("1.5", max: 100) }
        #expect(throws: MPDArgumentError("Number too large: 101")) { try MPDArguments.unsigned("101", max: 100) }
        #expect(throws: MPDArgumentError("Number too large: -1")) { try MPDArguments.unsigned("-1", max: 100) }
        #expect(throws: MPDArgumentError("Number too large: 99999999999999999999")) { try MPDArguments.unsigned("99999999999999999999", max: 100) }
        #expect(throws: MPDArgumentError("Integer expected: ")) { try MPDArguments.unsigned("") }
    }

    @Test func integers() throws {
        #expect(try MPDArguments.integer("-1") == -1)
        #expect(throws: MPDArgumentError("Number too large: 99999999999")) { try MPDArguments.integer("99999999999") }
        #expect(throws: MPDArgumentError("Number too large: -5")) { try MPDArguments.integer("-5", min: -1) }
    }

    @Test func ranges() throws {
        #expect(try MPDArguments.range("3") == .span(start: 3, end: 4))
        #expect(try MPDArguments.range("3:7") == .span(start: 3, end: 7))
        #expect(try MPDArguments.range("0:") == .span(start: 0, end: nil))
        #expect(try MPDArguments.range("2:2") == .span(start: 2, end: 2))
        #expect(try MPDArguments.range("-1") == .all)
        #expect(throws: MPDArgumentError("Integer or range expected: 1:2:3")) { try MPDArguments.range("1:2:3") }
        #expect(throws: MPDArgumentError("Integer or range expected: x")) { try MPDArguments.range("x") }
        #expect(throws: MPDArgumentError("Number is negative: -2:3")) { try MPDArguments.range("-2:3") }
        #expect(throws: MPDArgumentError("Number is negative: 3:-1")) { try MPDArguments.range("3:-1") }
        #expect(throws: MPDArgumentError("Malformed range: 5:2")) { try MPDArguments.range("5:2") }
        #expect(throws: MPDArgumentError("Number too large: 99999999999")) { try MPDArguments.range("99999999999") }
    }

    @Test func booleansFloatsAndModes() throws {
        #expect(try MPDArguments.bool("01") == true)
        #expect(try MPDArguments.bool("0") == false)
        #expect(throws: MPDArgumentError("Boolean (0/1) expected: 2")) { try MPDArguments.bool("2") }
        #expect(throws: MPDArgumentError("Boolean (0/1) expected: ")) { try MPDArguments.bool("") }
        #expect(try MPDArguments.float("1e3") == 1000)
        #expect(throws: MPDArgumentError("Float expected: x")) { try MPDArguments.float("x") }
        #expect(try MPDArguments.singleMode("oneshot") == .oneshot)
        #expect(throws: MPDArgumentError("Unrecognized single mode, expected 0, 1, or oneshot")) { try MPDArguments.singleMode("2") }
        #expect(throws: MPDArgumentError("Unrecognized replay gain mode")) { try MPDArguments.replayGainMode("bogus") }
        #expect(try MPDArguments.position("+2") == .afterCurrent(2))
        #expect(try MPDArguments.position("-0") == .beforeCurrent(0))
        #expect(try MPDArguments.position("5") == .absolute(5))
    }
}
