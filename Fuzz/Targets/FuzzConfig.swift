// SPDX-License-Identifier: GPL-3.0-or-later
// libFuzzer target: the config file's syntax (TonearmConfig): the TOML parse through TOMLKit
// (toml++) as `ConfigFile` calls it, the hand-written scan for each key's line (ConfigLines),
// every typed reading of every value (with its problem and the key's line), "did you mean",
// and the error text. Checks that every key the TOML parser accepted has a line in the file.
import Foundation
import TOMLKit
import TonearmConfig

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    // What `ConfigFile.load` reads: UTF-8 text, else the file is refused before parsing.
    guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return 0 }
    let document: ConfigDocument
    do {
        document = try ConfigDocument(parsing: text, path: "/fuzz/config.toml")
    } catch {
        _ = error.description
        return 0
    }
    let lineCount = text.unicodeScalars.reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
    var values = ConfigValues(lines: document.lines)
    walk(document.root, path: [], values: &values, lineCount: lineCount)
    _ = ConfigError(path: document.path, problems: values.problems).description
    return 0
}

private let names = ["output", "device", "volume", "eq", "replaygain", "preamp", "crossfade", "repeat", "shuffle"]

private func walk(_ table: TOMLTable, path: [String], values: inout ConfigValues, lineCount: Int) {
    for key in table.keys.sorted() {
        guard let v = table[key] else { continue }
        let keyPath = path + [key]
        let dotted = keyPath.joined(separator: ".")
        // A key TOMLKit accepted is found on a line of the file (its own, or its table's).
        guard let line = values.lines.line(of: keyPath) else {
            fatalError("no line for key \(keyPath) that the TOML parser accepted")
        }
        precondition((1...lineCount).contains(line), "line \(line) of a \(lineCount)-line file for \(keyPath)")
        _ = values.string(v, key: dotted)
        _ = values.bool(v, key: dotted)
        _ = values.integer(v, key: dotted, in: 0...100, allowed: "between 0 and 100")
        _ = values.number(v, key: dotted, in: -20...20, allowed: "between -20 and +20 dB")
        _ = values.choice(v, key: dotted, ["off", "track", "album"])
        _ = values.strings(v, key: dotted, allowEmptyStrings: false)
        _ = NearestName.suggestion(for: key, among: names)
        if let t = values.table(v, key: dotted) {
            walk(t, path: keyPath, values: &values, lineCount: lineCount)
        } else if let a = v.array {
            for e in a { if let t = e.table { walk(t, path: keyPath, values: &values, lineCount: lineCount) } }
        }
    }
}
