// SPDX-License-Identifier: GPL-3.0-or-later

/// `m:ss` (or `h:mm:ss`) for a number of seconds; `--:--` when unknown.
func formatTime(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0 else { return "--:--" }
    let t = Int(seconds)
    let h = t / 3600, m = (t / 60) % 60, s = t % 60
    let ss = s < 10 ? "0\(s)" : "\(s)"
    if h > 0 { return "\(h):\(m < 10 ? "0" : "")\(m):\(ss)" }
    return "\(m):\(ss)"
}

/// A one-line description of a file's format: `FLAC · 44.1 kHz · 16-bit · stereo · 900 kb/s`.
func describeFormat(codec: String, sampleRate: Int, bits: Int?, channelLayout: String, bitRate: Int?) -> String {
    var parts = [codec.uppercased()]
    let khz = Double(sampleRate) / 1000
    parts.append(khz == khz.rounded() ? "\(Int(khz)) kHz" : "\((khz * 10).rounded() / 10) kHz")
    if let b = bits, b > 0 { parts.append("\(b)-bit") }
    parts.append(channelLayout)
    if let r = bitRate, r > 0 { parts.append("\(r / 1000) kb/s") }
    return parts.joined(separator: " · ")
}
