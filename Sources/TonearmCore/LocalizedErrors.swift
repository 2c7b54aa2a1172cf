// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

// Ported iOS code reports errors with `error.localizedDescription`. Without `LocalizedError`,
// Foundation answers that for a Swift error with "The operation could not be completed.
// (TonearmCore.TonearmError error 14.)"; with it, the text is the same clear one that
// `"\(error)"` gives (which file, what is wrong). Each public error type of Tonearm conforms in
// its own module.

extension TonearmError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

extension NetworkFailure: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}

extension WatchFailure: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
