// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// The status logic of an export as a plain value: inputs in, the new status and whether to
/// publish out. No threads, no I/O; ``AssetExportSession`` holds one behind a lock.
///
/// waiting → exporting (``start()``) → completed / failed (``finish(_:)``);
/// waiting or exporting → cancelled (``cancel()``). Final states never change again, and a
/// cancelled export stays cancelled even if its work then finishes either way.
public struct ExportStateMachine: Sendable, Hashable {
    public private(set) var status: ExportStatus = .waiting
    /// Set when the status is `failed`.
    public private(set) var error: TonearmError?
    /// 0…1, never decreasing; 1 once completed.
    public private(set) var progress: Double = 0
    /// The progress last published (updates are published in steps of at least ``progressStep``).
    private var published: Double = 0
    /// The smallest progress change worth publishing.
    public static let progressStep = 0.005

    public init() {}

    /// `waiting → exporting`. Throws `invalidState` when the export ran before, and
    /// `exportCancelled(path:)` when it was cancelled before it started.
    public mutating func start(path: String) throws(TonearmError) {
        switch status {
        case .waiting: status = .exporting
        case .cancelled: throw .exportCancelled(path: path)
        default: throw .invalidState("an export session runs once; this one is \(status)")
        }
    }

    /// Records progress while exporting (clamped to 0…1, never backwards). Returns true when the
    /// change is worth publishing (a step of at least ``progressStep``, or reaching 1).
    public mutating func report(progress p: Double) -> Bool {
        guard status == .exporting, p.isFinite else { return false }
        let v = min(1, max(progress, p))
        progress = v
        if v - published >= Self.progressStep || (v == 1 && published < 1) {
            published = v
            return true
        }
        return false
    }

    /// `waiting/exporting → cancelled`. Returns true when the status changed.
    public mutating func cancel() -> Bool {
        guard status == .waiting || status == .exporting else { return false }
        status = .cancelled
        return true
    }

    /// The end of the work: `exporting → completed` (progress 1) or `→ failed` with the error.
    /// Ignored unless exporting. Returns true when the status changed.
    @discardableResult
    public mutating func finish(_ result: Result<Void, TonearmError>) -> Bool {
        guard status == .exporting else { return false }
        switch result {
        case .success:
            status = .completed
            progress = 1
            published = 1
        case .failure(let e):
            if case .exportCancelled = e {
                status = .cancelled
            } else {
                status = .failed
                error = e
            }
        }
        return true
    }
}
