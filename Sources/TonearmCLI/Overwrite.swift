// SPDX-License-Identifier: GPL-3.0-or-later
import Tonearm
import Foundation

/// The one rule for files the CLI writes (`render -o`, `convert -o`, `extract-audio -o`,
/// `play --output file:`): an existing file is replaced only with `--force`, and the refusal
/// reads the same everywhere.
enum Overwrite {
    /// The refusal: `out.wav: already exists; use --force to overwrite it`.
    static func message(_ path: String) -> String { "\(path): \(ErrorReport.fileExistsReason)" }

    /// Throws the refusal (`TonearmError.fileExists`: reported as ``message(_:)``, exit status 1)
    /// when `path` exists and `force` is not set.
    static func check(_ path: String, force: Bool) throws(TonearmError) {
        if !force && FileManager.default.fileExists(atPath: path) { throw .fileExists(path: path) }
    }
}
