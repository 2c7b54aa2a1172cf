// SPDX-License-Identifier: GPL-3.0-or-later

/// Turns the bytes a terminal sends into the key names ``KeyBindings`` binds: a character
/// ("q", "?", "J", "é"), or a named key ("space", "enter", "tab", "shift-tab", "backspace",
/// "escape", "up", "shift-up", "ctrl-left", "alt-down", "home", "end", "insert", "delete",
/// "page-up", "page-down", "f1"…"f12", "ctrl-a"…"ctrl-z"). Pure: fed bytes as they arrive, in
/// any pieces, so it is tested without a terminal. xterm-compatible sequences, both the CSI and
/// the SS3 forms; Alt with a character, and sequences that name no key, give nothing.
struct PlayKeyDecoder: TerminalInputDecoder {
    private var sequence: [UInt8] = []
    private var utf8: [UInt8] = []
    private var utf8Expected = 0

    init() {}

    var isWaitingAfterEscape: Bool { sequence == [0x1B] }

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
        var out: [String] = []
        for b in bytes { out += feed(byte: b) }
        return out
    }

    mutating func flushEscape() -> [String] {
        guard isWaitingAfterEscape else { return [] }
        sequence.removeAll()
        return ["escape"]
    }

    private mutating func feed(byte: UInt8) -> [String] {
        if !sequence.isEmpty { return escape(byte) }
        if !utf8.isEmpty {
            if byte & 0xC0 == 0x80 {
                utf8.append(byte)
                guard utf8.count == utf8Expected else { return [] }
                defer { utf8.removeAll() }
                return String(validating: utf8, as: UTF8.self).map { [$0] } ?? []
            }
            utf8.removeAll()
        }
        switch byte {
        case 0x1B:
            sequence = [byte]
            return []
        case 0x0D, 0x0A: return ["enter"]
        case 0x09: return ["tab"]
        case 0x7F, 0x08: return ["backspace"]
        case 0x20: return ["space"]
        case 0x01...0x1A: return ["ctrl-" + String(UnicodeScalar(byte + 0x60))]
        case 0x21...0x7E: return [String(UnicodeScalar(byte))]
        case 0xC2...0xDF, 0xE0...0xEF, 0xF0...0xF4:
            utf8 = [byte]
            utf8Expected = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            return []
        default: return []
        }
    }

    private mutating func escape(_ byte: UInt8) -> [String] {
        sequence.append(byte)
        if sequence.count == 2 {
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "O"): return []
            case 0x1B:
                sequence = [0x1B]
                return ["escape"]
            default:
                sequence.removeAll()  // Alt+character: not a key here
                return []
            }
        }
        if sequence[1] == UInt8(ascii: "O") {
            defer { sequence.removeAll() }
            return Self.final(byte, parameters: "").map { [$0] } ?? []
        }
        guard (0x40...0x7E).contains(byte) else {
            if sequence.count > 16 { sequence.removeLast() }
            return []
        }
        defer { sequence.removeAll() }
        let parameters = String(decoding: sequence[2..<(sequence.count - 1)], as: UTF8.self)
        return Self.final(byte, parameters: parameters).map { [$0] } ?? []
    }

    /// The key a sequence's final byte and parameters ("1;2": Shift, "1;3": Alt, "1;5": Ctrl) name.
    private static func final(_ byte: UInt8, parameters: String) -> String? {
        let parts = parameters.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let modifier: String
        switch parts.count > 1 ? parts[1] : "" {
        case "2": modifier = "shift-"
        case "3": modifier = "alt-"
        case "5": modifier = "ctrl-"
        default: modifier = ""
        }
        switch byte {
        case UInt8(ascii: "A"): return modifier + "up"
        case UInt8(ascii: "B"): return modifier + "down"
        case UInt8(ascii: "C"): return modifier + "right"
        case UInt8(ascii: "D"): return modifier + "left"
        case UInt8(ascii: "H"): return "home"
        case UInt8(ascii: "F"): return "end"
        case UInt8(ascii: "Z"): return "shift-tab"
        case UInt8(ascii: "P"): return "f1"
        case UInt8(ascii: "Q"): return "f2"
        case UInt8(ascii: "R"): return "f3"
        case UInt8(ascii: "S"): return "f4"
        case UInt8(ascii: "~"):
            switch parts.first ?? "" {
            case "1", "7": return "home"
            case "2": return "insert"
            case "3": return "delete"
            case "4", "8": return "end"
            case "5": return "page-up"
            case "6": return "page-down"
            case "11": return "f1"
            case "12": return "f2"
            case "13": return "f3"
            case "14": return "f4"
            case "15": return "f5"
            case "17": return "f6"
            case "18": return "f7"
            case "19": return "f8"
            case "20": return "f9"
            case "21": return "f10"
            case "23": return "f11"
            case "24": return "f12"
            default: return nil
            }
        default: return nil
        }
    }
}
