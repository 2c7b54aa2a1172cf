// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// Corrupt packets skipped, by file, in the order first met — what `play` and a stream say of a
/// damaged file: the first corrupt packet of a file is said when met, the rest are counted and
/// given in the summary (a damaged file can have hundreds).
struct CorruptPacketTally {
    /// Each file with corrupt packets and how many, in the order first met.
    private(set) var files: [(path: String, count: Int)] = []

    /// Counts `warning` when it is a corrupt packet; what to say now: the warning itself — for a
    /// corrupt packet only the first of its file, with a word that the rest are counted — or nil.
    mutating func message(for warning: AudioWarning) -> String? {
        guard case .corruptPacket(let path, _, _, _) = warning else { return warning.description }
        if let i = files.firstIndex(where: { $0.path == path }) {
            files[i].count += 1
            return nil
        }
        files.append((path, 1))
        return warning.description + " (further ones are counted in the summary)"
    }

    /// Corrupt packets counted in all.
    var total: Int { files.reduce(0) { $0 + $1.count } }

    /// What the summary line ("Done: …") adds: ", 3 corrupt packets skipped", or nothing.
    var summaryPart: String {
        let c = total
        return c == 0 ? "" : ", \(c) corrupt packet\(c == 1 ? "" : "s") skipped"
    }

    /// The summary's line for each file, indented.
    var summaryLines: [String] {
        files.map { path, n in
            "  \(path): " + (n == 1 ? "1 corrupt packet skipped (a gap in the sound there)"
                                    : "\(n) corrupt packets skipped (a gap in the sound at each)")
        }
    }
}
