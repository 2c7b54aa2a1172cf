// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm

/// What the picker's keyboard gives.
enum PickerInput: Sendable, Equatable {
    case key(MediaPicker.Key)
    /// Ctrl-L: draw the whole screen again.
    case redraw
}

/// Turns the bytes a terminal sends into the picker's keys. Pure: fed bytes as they arrive, in
/// any pieces, so it is tested without a terminal.
///
/// - Text is UTF-8: a character's bytes are gathered, even across reads, into one key; bytes
///   that are not UTF-8 are dropped.
/// - Escape sequences of xterm-compatible terminals (both the CSI and the SS3 forms): arrows
///   (modifiers ignored), Home, End, Page Up/Down, Shift-Tab.
/// - Bracketed paste (`ESC [200~` … `ESC [201~`): one text key, newlines included, so pasting
///   never presses Enter.
/// - Control keys: Enter (CR or LF), Backspace (DEL or BS), Tab, Ctrl-A (select all), Ctrl-U
///   (clear the search), Ctrl-W (delete a word), Ctrl-N/Ctrl-P (down/up), Ctrl-Space (select
///   even while typing), Ctrl-G and Ctrl-C (cancel), Ctrl-L (redraw).
/// - Escape alone: its byte also starts every sequence, so the reader calls ``flushEscape()``
///   when nothing has followed it for a moment (``isWaitingAfterEscape``).
struct PickerKeyDecoder: TerminalInputDecoder {
    private var sequence: [UInt8] = []
    private var utf8: [UInt8] = []
    private var utf8Expected = 0
    private var pasting = false
    private var pasted: [UInt8] = []

    private static let pasteStart: [UInt8] = Array("[200~".utf8)
    private static let pasteEnd: [UInt8] = [0x1B] + Array("[201~".utf8)

    /// Whether an Escape byte is waiting to be told from the start of a sequence.
    var isWaitingAfterEscape: Bool { sequence == [0x1B] }

    mutating func feed(_ bytes: some Sequence<UInt8>) -> [PickerInput] {
        var out: [PickerInput] = []
        for b in bytes { out += feed(b) }
        return out
    }

    mutating func feed(_ byte: UInt8) -> [PickerInput] {
        if pasting { return paste(byte) }
        if !sequence.isEmpty { return escape(byte) }
        if !utf8.isEmpty {
            if byte & 0xC0 == 0x80 {
                utf8.append(byte)
                guard utf8.count == utf8Expected else { return [] }
                defer { utf8.removeAll() }
                return String(validating: utf8, as: UTF8.self).map { [.key(.text($0))] } ?? []
            }
            utf8.removeAll()  // a character cut short: dropped; the byte starts anew
        }
        switch byte {
        case 0x1B:
            sequence = [byte]
            return []
        case 0x0D, 0x0A: return [.key(.enter)]
        case 0x7F, 0x08: return [.key(.backspace)]
        case 0x09: return [.key(.tab)]
        case 0x01: return [.key(.selectAll)]
        case 0x15: return [.key(.clearSearch)]
        case 0x17: return [.key(.deleteWord)]
        case 0x0E: return [.key(.down)]
        case 0x10: return [.key(.up)]
        case 0x00: return [.key(.toggle)]
        case 0x03: return [.key(.interrupt)]
        case 0x07: return [.key(.escape)]
        case 0x0C: return [.redraw]
        case 0x20...0x7E: return [.key(.text(String(UnicodeScalar(byte))))]
        case 0xC2...0xDF, 0xE0...0xEF, 0xF0...0xF4:
            utf8 = [byte]
            utf8Expected = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
            return []
        default: return []  // other control bytes, stray continuation bytes
        }
    }

    /// The Escape key, when its byte is still waiting and nothing followed.
    mutating func flushEscape() -> [PickerInput] {
        guard isWaitingAfterEscape else { return [] }
        sequence.removeAll()
        return [.key(.escape)]
    }

    private mutating func escape(_ byte: UInt8) -> [PickerInput] {
        sequence.append(byte)
        if sequence.count == 2 {
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "O"): return []
            case 0x1B:
                sequence = [0x1B]  // Escape, then a new sequence (or Escape) begins
                return [.key(.escape)]
            default:
                sequence.removeAll()  // Alt+key: not used
                return []
            }
        }
        if sequence[1] == UInt8(ascii: "O") {
            defer { sequence.removeAll() }
            return Self.final(byte, parameters: []).map { [.key($0)] } ?? []
        }
        // CSI: parameter and intermediate bytes, then a final byte 0x40…0x7E.
        guard (0x40...0x7E).contains(byte) else {
            if sequence.count > 16 { sequence.removeLast() }  // too long to mean a key: read to its end
            return []
        }
        defer { sequence.removeAll() }
        let parameters = Array(sequence[2..<(sequence.count - 1)])
        if Array(sequence.dropFirst()) == Self.pasteStart {
            pasting = true
            pasted.removeAll()
            return []
        }
        return Self.final(byte, parameters: parameters).map { [.key($0)] } ?? []
    }

    private mutating func paste(_ byte: UInt8) -> [PickerInput] {
        pasted.append(byte)
        guard pasted.count >= Self.pasteEnd.count, pasted.suffix(Self.pasteEnd.count).elementsEqual(Self.pasteEnd) else { return [] }
        pasting = false
        let text = String(decoding: pasted.dropLast(Self.pasteEnd.count), as: UTF8.self)
        pasted.removeAll()
        return text.isEmpty ? [] : [.key(.text(text))]
    }

    private static func final(_ byte: UInt8, parameters: [UInt8]) -> MediaPicker.Key? {
        switch byte {
        case UInt8(ascii: "A"): return .up
        case UInt8(ascii: "B"): return .down
        case UInt8(ascii: "C"): return .right
        case UInt8(ascii: "D"): return .left
        case UInt8(ascii: "H"): return .home
        case UInt8(ascii: "F"): return .end
        case UInt8(ascii: "Z"): return .backTab
        case UInt8(ascii: "~"):
            switch String(decoding: parameters.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self) {
            case "1", "7": return .home
            case "4", "8": return .end
            case "5": return .pageUp
            case "6": return .pageDown
            default: return nil
            }
        default: return nil
        }
    }
}
