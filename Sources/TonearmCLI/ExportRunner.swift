// SPDX-License-Identifier: GPL-3.0-or-later
import ArgumentParser
import Foundation
import Tonearm

/// Runs an export for `extract-audio` and `convert`: a progress bar on a terminal (plain
/// `progress N%` lines every 10 % otherwise), Ctrl-C cancels (nothing is left behind), errors go
/// to standard error with exit status 1.
enum ExportRunner {
    static func run(_ session: AssetExportSession, output: String) async throws {
        let interactive = Terminal.isInteractive
        let updates = session.progressUpdates()
        let display = Task {
            var lastStep = 0  // plain lines from 10 %: nothing printed for an export that fails at once
            for await p in updates {
                if interactive {
                    Terminal.write("\r" + LiveScreen.bar(fraction: p, width: 40) + " \(Int(p * 100))% ")
                } else {
                    let step = Int(p * 10)
                    if step > lastStep { lastStep = step; Terminal.write("progress \(step * 10)%\n") }
                }
            }
        }
        let sigint = SignalWatch([SIGINT]) { _ in session.cancelExport() }
        defer { sigint.cancel() }
        do {
            try await session.export()
            await display.value
            if interactive { Terminal.write("\r" + String(repeating: " ", count: 48) + "\r") }
        } catch {
            await display.value
            if interactive { Terminal.write("\r" + String(repeating: " ", count: 48) + "\r") }
            throw error  // reported by the entry point: `tonearm: <file>: <why>`, status 1
        }
        let asset = Asset(url: URL(fileURLWithPath: output))
        if let track = try? await asset.tracks(withMediaType: .audio).first, let d = try? await asset.duration {
            let f = track.formatDescription
            Terminal.write("Wrote \(output): \(f.codecName), \(f.sampleRate ?? 0) Hz, \(f.channelLayout ?? ""), \(formatTime(d)) (\(String(format: "%.3f", d)) s)\n")
        } else {
            Terminal.write("Wrote \(output)\n")
        }
    }

    /// Seconds from `90`, `1:30`, `1:02:03.5` (nil when malformed).
    static func parseTime(_ s: String) -> Double? {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (i, p) in parts.enumerated() {
            guard let v = Double(p), v >= 0, v.isFinite else { return nil }
            if i < parts.count - 1 && (v != v.rounded() || (i > 0 && v >= 60)) { return nil }
            if i == parts.count - 1 && parts.count > 1 && v >= 60 { return nil }
            total = total * 60 + v
        }
        return total
    }

    /// The preset named by `--preset`: its kebab-case name (`apple-m4a`) or, quietly, the old
    /// camel-case spelling (`appleM4A`); a clear error listing the names otherwise.
    static func preset(_ name: String) throws -> ExportPreset {
        guard let p = ExportPreset(name: name) else {
            throw ValidationError("--preset must be one of \(presetNames), not '\(name)'")
        }
        return p
    }

    /// The preset names, as `--preset` shows them.
    static var presetNames: String { ExportPreset.allCases.map(\.name).joined(separator: ", ") }
}
