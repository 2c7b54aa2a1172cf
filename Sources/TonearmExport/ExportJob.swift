// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// One export's work, run synchronously on a worker thread by ``AssetExportSession``: it writes
/// the whole output to `target.temporaryPath` and returns, or throws. It calls `progress`
/// (0…1, from the worker thread) as it goes and polls `cancel` between packets, throwing
/// `exportCancelled(path:)` when set. It never commits or removes the temporary file.
protocol ExportJob: Sendable {
    func run(target: OutputTarget, cancel: CancelFlag, progress: (Double) -> Void) throws(TonearmError)
}
