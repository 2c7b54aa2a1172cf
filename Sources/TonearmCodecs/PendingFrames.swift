// SPDX-License-Identifier: GPL-3.0-or-later

/// Decoded, trimmed audio waiting to be read: planar float channels that ``FFmpegDecoder``
/// fills one decoded frame at a time (``reserve(_:channels:)``, write through ``channelData``,
/// then ``filled(_:)``) and its reader takes out, planar or interleaved. Grows to the largest
/// frame seen and then allocates nothing. Not thread-safe (the decoder's caller serialises).
final class PendingFrames {
    /// One buffer per channel, each of ``capacity`` frames.
    private(set) var channelData: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var channels = 0
    private var capacity = 0
    private var start = 0
    /// Frames waiting.
    private(set) var count = 0

    init() { channelData = .allocate(capacity: 64) }

    deinit {
        for c in 0..<(capacity > 0 ? channels : 0) { channelData[c].deallocate() }
        channelData.deallocate()
    }

    /// Makes room for `frames` frames of `channels` channels (at most 64), dropping what waits.
    func reserve(_ frames: Int, channels: Int) {
        if frames <= capacity && channels == self.channels { return }
        let cap = max(frames, capacity, 4096)
        for c in 0..<(capacity > 0 ? self.channels : 0) { channelData[c].deallocate() }
        for c in 0..<channels { channelData[c] = .allocate(capacity: cap) }
        self.channels = channels
        capacity = cap
        start = 0
        count = 0
    }

    /// The first `frames` frames of ``channelData`` are now what waits.
    func filled(_ frames: Int) {
        start = 0
        count = frames
    }

    /// Forgets what waits.
    func clear() {
        start = 0
        count = 0
    }

    /// Moves up to `frames` waiting frames into planar channel pointers at `offset`; returns
    /// how many were moved.
    func take(into out: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, frames: Int) -> Int {
        let n = min(count, frames)
        for c in 0..<channels {
            (out[c] + offset).update(from: channelData[c] + start, count: n)
        }
        start += n; count -= n
        return n
    }

    /// Moves up to `frames` waiting frames interleaved into `out`; returns how many were moved.
    func takeInterleaved(into out: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let n = min(count, frames)
        let ch = channels
        if ch == 2 {
            let l = channelData[0] + start, r = channelData[1] + start
            for i in 0..<n { out[2 * i] = l[i]; out[2 * i + 1] = r[i] }
        } else {
            for c in 0..<ch {
                let src = channelData[c] + start
                for i in 0..<n { out[i * ch + c] = src[i] }
            }
        }
        start += n; count -= n
        return n
    }
}
