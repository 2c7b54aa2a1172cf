// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Decoded contents of a WAV file.
public struct WAVContents: Sendable {
    public var sampleRate: Double
    public var channelCount: Int
    /// 1 = PCM, 3 = IEEE float (from the format tag, or the extensible sub-format).
    public var formatTag: Int
    public var bitsPerSample: Int
    /// Samples per channel, as Float (integer PCM scaled to -1..<1).
    public var channels: [[Float]]

    public var frameCount: Int { channels.first?.count ?? 0 }
    public var duration: Double { Double(frameCount) / sampleRate }

    /// The channels averaged to one.
    public var mono: [Float] {
        guard channelCount > 1 else { return channels.first ?? [] }
        var out = [Float](repeating: 0, count: frameCount)
        for c in channels { for i in 0..<out.count { out[i] += c[i] } }
        let k = 1 / Float(channelCount)
        for i in 0..<out.count { out[i] *= k }
        return out
    }
}

/// Reads a WAV file: 8/16/24/32-bit PCM and 32/64-bit float, plain or extensible headers.
/// A data chunk whose size is larger than the file (a recorder stopped abruptly) is read to the end.
public func readWAV(_ path: String) throws -> WAVContents {
    let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    func u32(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 | Int(data[o + 2]) << 16 | Int(data[o + 3]) << 24 }
    func u16(_ o: Int) -> Int { Int(data[o]) | Int(data[o + 1]) << 8 }
    func tag(_ o: Int) -> String { String(decoding: data[o..<o + 4], as: UTF8.self) }
    guard data.count >= 12, tag(0) == "RIFF", tag(8) == "WAVE" else { throw TestSupportError("\(path): not a WAV file") }
    var offset = 12
    var fmt: (tag: Int, channels: Int, rate: Int, bits: Int)?
    while offset + 8 <= data.count {
        let id = tag(offset)
        var size = u32(offset + 4)
        let body = offset + 8
        if id == "fmt " {
            var t = u16(body)
            if t == 0xFFFE, size >= 40 { t = u16(body + 24) }
            fmt = (t, u16(body + 2), u32(body + 4), u16(body + 14))
        } else if id == "data" {
            guard let f = fmt else { throw TestSupportError("\(path): data before fmt") }
            size = min(size, data.count - body)
            let bytes = f.bits / 8
            let frames = size / (bytes * f.channels)
            var channels = [[Float]](repeating: [Float](repeating: 0, count: frames), count: f.channels)
            data.withUnsafeBytes { raw in
                for i in 0..<frames {
                    for c in 0..<f.channels {
                        let o = body + (i * f.channels + c) * bytes
                        let v: Float
                        switch (f.tag, f.bits) {
                        case (3, 32): v = Float(bitPattern: raw.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)
                        case (3, 64): v = Float(Double(bitPattern: raw.loadUnaligned(fromByteOffset: o, as: UInt64.self).littleEndian))
                        case (1, 8): v = (Float(raw[o]) - 128) / 128
                        case (1, 16): v = Float(Int16(bitPattern: raw.loadUnaligned(fromByteOffset: o, as: UInt16.self).littleEndian)) / 32768
                        case (1, 24):
                            let x = Int32(raw[o]) << 8 | Int32(raw[o + 1]) << 16 | Int32(raw[o + 2]) << 24
                            v = Float(x >> 8) / 8_388_608
                        case (1, 32): v = Float(Int32(bitPattern: raw.loadUnaligned(fromByteOffset: o, as: UInt32.self).littleEndian)) / 2_147_483_648
                        default: v = 0
                        }
                        channels[c][i] = v
                    }
                }
            }
            guard [1, 3].contains(f.tag) else { throw TestSupportError("\(path): unsupported format tag \(f.tag)") }
            return WAVContents(sampleRate: Double(f.rate), channelCount: f.channels, formatTag: f.tag,
                               bitsPerSample: f.bits, channels: channels)
        }
        offset = body + size + (size & 1)
    }
    throw TestSupportError("\(path): no data chunk")
}

/// Writes interleaved-by-channel Float samples as a 16-bit PCM WAV (for `paplay` fixtures).
public func writeWAV16(_ path: String, channels: [[Float]], sampleRate: Int) throws {
    let n = channels.first?.count ?? 0
    let ch = channels.count
    var d = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    let bytes = UInt32(n * ch * 2)
    d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); d.append(contentsOf: Array("WAVE".utf8))
    d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(UInt16(ch)); u32(UInt32(sampleRate))
    u32(UInt32(sampleRate * ch * 2)); u16(UInt16(ch * 2)); u16(16)
    d.append(contentsOf: Array("data".utf8)); u32(bytes)
    for i in 0..<n {
        for c in 0..<ch { u16(UInt16(bitPattern: Int16((max(-1, min(1, channels[c][i])) * 32767).rounded()))) }
    }
    try d.write(to: URL(fileURLWithPath: path))
}

/// A sine wave, `seconds` long.
public func sineWave(frequency: Double, amplitude: Float, seconds: Double, sampleRate: Double) -> [Float] {
    let n = Int(seconds * sampleRate)
    return (0..<n).map { amplitude * Float(sin(2 * Double.pi * frequency * Double($0) / sampleRate)) }
}

/// Root-mean-square level of `samples` (0 for none).
public func rms<C: Collection>(_ samples: C) -> Float where C.Element == Float {
    guard !samples.isEmpty else { return 0 }
    var sum = 0.0
    for s in samples { sum += Double(s) * Double(s) }
    return Float((sum / Double(samples.count)).squareRoot())
}

/// Power of `frequency` in `samples` (Goertzel), normalised so that a full-scale sine gives ≈ 0.25.
public func goertzelPower(_ samples: ArraySlice<Float>, frequency: Double, sampleRate: Double) -> Double {
    let w = 2 * Double.pi * frequency / sampleRate
    let coeff = 2 * cos(w)
    var s1 = 0.0, s2 = 0.0
    for x in samples {
        let s0 = Double(x) + coeff * s1 - s2
        s2 = s1
        s1 = s0
    }
    let power = s1 * s1 + s2 * s2 - coeff * s1 * s2
    let n = Double(samples.count)
    return power / (n * n)
}

/// Frequency estimated from the rising zero crossings (interpolated) of a mono signal.
public func zeroCrossingFrequency(_ samples: [Float], sampleRate: Double) -> Double? {
    var first: Double?
    var last = 0.0
    var count = 0
    for i in 1..<max(1, samples.count) where samples[i - 1] < 0 && samples[i] >= 0 {
        let a = Double(samples[i - 1]), b = Double(samples[i])
        let t = Double(i - 1) + (-a) / (b - a)
        if first == nil { first = t } else { count += 1 }
        last = t
    }
    guard let first, count > 0, last > first else { return nil }
    return Double(count) * sampleRate / (last - first)
}

/// The dominant frequency of a mono signal: a zero-crossing estimate refined by a Goertzel scan
/// (0.25 Hz steps over ±5 %) of at most 32768 samples from the middle.
public func dominantFrequency(_ samples: [Float], sampleRate: Double) -> Double? {
    guard let rough = zeroCrossingFrequency(samples, sampleRate: sampleRate) else { return nil }
    let n = min(samples.count, 32768)
    let start = (samples.count - n) / 2
    let window = samples[start..<start + n]
    var best = rough, bestPower = -1.0
    var f = rough * 0.95
    while f <= rough * 1.05 {
        let p = goertzelPower(window, frequency: f, sampleRate: sampleRate)
        if p > bestPower { bestPower = p; best = f }
        f += 0.25
    }
    return best
}

/// The span of non-silence: from the first to the last 10 ms block whose RMS exceeds `threshold`,
/// as sample indices (`start..<end`), or nil when everything is silent.
public func nonSilentSpan(_ samples: [Float], sampleRate: Double, threshold: Float = 0.01) -> Range<Int>? {
    let block = max(1, Int(sampleRate / 100))
    var first: Int?, last: Int?
    var i = 0
    while i < samples.count {
        let end = min(i + block, samples.count)
        if rms(samples[i..<end]) > threshold {
            if first == nil { first = i }
            last = end
        }
        i = end
    }
    guard let first, let last else { return nil }
    return first..<last
}
