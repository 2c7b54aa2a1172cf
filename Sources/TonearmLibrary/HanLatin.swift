// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Synchronization

/// Chinese characters read in pinyin (with tones) by ICU's Han-Latin transform, through
/// Foundation's `applyingTransform(.mandarinToLatin)` (ICU ships with Foundation on Linux too),
/// remembered: the transform costs about 50 µs a character, and a scan meets the same artist,
/// album and genre on every track of an album. Any thread.
enum HanLatin {
    /// Texts remembered at most; the memory is emptied when it is full (a scan of a large
    /// library meets the names of one folder at a time).
    static let capacity = 20_000

    private static let memory = Mutex<[String: String]>([:])

    /// `text` with its Chinese characters in pinyin ("陈奕迅" → "chén yì xùn"); `text` as it is
    /// when ICU gives nothing.
    static func latin(_ text: String) -> String {
        if let known = memory.withLock({ $0[text] }) { return known }
        let latin = text.applyingTransform(.mandarinToLatin, reverse: false) ?? text
        memory.withLock { m in
            if m.count >= capacity { m.removeAll(keepingCapacity: true) }
            m[text] = latin
        }
        return latin
    }
}
