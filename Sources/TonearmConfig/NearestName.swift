// SPDX-License-Identifier: GPL-3.0-or-later

/// "Did you mean": the known name nearest to a misspelt one.
package enum NearestName {
    /// The known name nearest to `name` (at most a third of its letters off, and at most 3),
    /// else nil. Candidates are compared without case, `-` and `_`.
    package static func suggestion(for name: String, among candidates: [String]) -> String? {
        func norm(_ s: String) -> String { s.lowercased().filter { $0 != "-" && $0 != "_" } }
        let n = norm(name)
        let scored = candidates.map { ($0, editDistance(n, norm($0))) }.min { $0.1 < $1.1 }
        guard let (best, d) = scored, d <= min(3, max(1, n.count / 3)) else { return nil }
        return best
    }

    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var row = Array(0...b.count)
        for i in 1...a.count {
            var prev = row[0]
            row[0] = i
            for j in 1...b.count {
                let cur = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1))
                // Adjacent letters swapped count as one edit.
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { row[j] = min(row[j], prev) }
                prev = cur
            }
        }
        return row[b.count]
    }
}
