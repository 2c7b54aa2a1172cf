// SPDX-License-Identifier: GPL-3.0-or-later
import Glibc
import TonearmCore

/// Writes `yuv420p` ``VideoFrame``s to a YUV4MPEG2 (`.y4m`) file, as FFmpeg's `yuv4mpegpipe`
/// muxer does: the stream header (size, frame rate, progressive, pixel aspect, `C420jpeg`) from
/// the first frame, then `FRAME` and the three planes, without padding, for each frame. A frame
/// of another size (an HLS stream's variant switch) is scaled to the first size, as the `ffmpeg`
/// command scales it (bicubic).
/// Not thread-safe: one writer thread.
public final class Y4MWriter {
    public let path: String
    private let frameRate: (num: Int, den: Int)
    private var fd: Int32
    private var shape: (width: Int, height: Int)?
    public private(set) var framesWritten = 0
    private let scaler = FrameConverter()

    /// Creates (or truncates) `path`. `frameRate`: the stream's rate as a fraction (the header
    /// needs one; 25/1 when the track does not say).
    public init(path: String, frameRate: (num: Int, den: Int)) throws(TonearmError) {
        self.path = path
        self.frameRate = frameRate.num > 0 && frameRate.den > 0 ? frameRate : (num: 25, den: 1)
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Appends one frame; every frame must be `yuv420p` (one of another size than the first is
    /// scaled to it).
    public func write(_ frame: VideoFrame) throws(TonearmError) {
        guard frame.pixelFormat == .yuv420p else { throw .invalidArgument("\(path): YUV4MPEG2 takes yuv420p frames, not \(frame.pixelFormat.rawValue)") }
        var frame = frame
        if let s = shape {
            if s.width != frame.width || s.height != frame.height {
                guard let scaled = scaler.scaled(frame, width: s.width, height: s.height) else {
                    throw .invalidArgument("\(path): a frame of \(frame.width)×\(frame.height) does not scale to \(s.width)×\(s.height)")
                }
                frame = scaled
            }
        } else {
            shape = (frame.width, frame.height)
            let a = frame.pixelAspectRatio
            try put(Array("YUV4MPEG2 W\(frame.width) H\(frame.height) F\(frameRate.num):\(frameRate.den) Ip A\(a.horizontal):\(a.vertical) C420jpeg XYSCSS=420JPEG\n".utf8))
        }
        try put(Array("FRAME\n".utf8) + frame.packedBytes)
        framesWritten += 1
    }

    /// Closes the file (also done when the writer goes); reports a failed close.
    public func close() throws(TonearmError) {
        guard fd >= 0 else { return }
        let r = Glibc.close(fd)
        fd = -1
        if r != 0 { throw .writeFailed(path: path, reason: String(cString: strerror(errno))) }
    }

    private func put(_ bytes: [UInt8]) throws(TonearmError) {
        guard fd >= 0 else { throw .invalidState("\(path): the writer is closed") }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .writeFailed(path: path, reason: String(cString: strerror(errno)))
            }
            done += n
        }
    }
}
