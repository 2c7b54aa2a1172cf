// SPDX-License-Identifier: GPL-3.0-or-later

extension Equalizer {
    /// Times this kernel on one thread: processes `seconds` of pseudo-random interleaved audio
    /// (in blocks of `blockFrames`) and returns how many times faster than real time it ran.
    /// A hand-run harness for release builds; tests never assert on it. Allocates its buffer.
    public mutating func measureRealTimeFactor(seconds: Double = 60, blockFrames: Int = 1024) -> Double {
        let ch = channels
        let block = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames * ch)
        defer { block.deallocate() }
        var seed: UInt32 = 0x1234_5678
        for i in 0..<(blockFrames * ch) {
            seed = seed &* 1_664_525 &+ 1_013_904_223
            block[i] = Float(Int32(bitPattern: seed)) / Float(Int32.max) * 0.25
        }
        let totalFrames = Int(seconds * sampleRate)
        var done = 0
        let clock = ContinuousClock()
        let start = clock.now
        while done < totalFrames {
            let n = min(blockFrames, totalFrames - done)
            process(block, frames: n, channels: ch)
            done += n
        }
        let elapsed = clock.now - start
        let secs = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return seconds / max(secs, 1e-9)
    }
}
