// SPDX-License-Identifier: GPL-3.0-or-later
import Logging

/// The compatibility layer's warnings: where Apple's API swallows a failure (a query that cannot
/// read the library gives nil, a non-throwing `setQueue(with:)`), ported code would never hear of
/// it; the reason is logged (swift-log, label `tonearm.compat`) instead of lost.
let compatLogger = Logger(label: "tonearm.compat")
