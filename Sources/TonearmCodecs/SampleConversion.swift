// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

/// Converts `count` frames starting at frame `from` of a decoded FFmpeg frame to Float32 planar,
/// writing channel `c` to `out[c] + offset`. Hand-written loops (no allocation, no swr) for every
/// sample format FFmpeg's audio decoders produce. Returns false for an unknown sample format.
func convertFrame(_ frame: UnsafeMutablePointer<AVFrame>, channels: Int, from: Int, count: Int,
                  into out: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, offset: Int) -> Bool {
    guard count > 0 else { return true }
    guard let data = frame.pointee.extended_data else { return false }
    let format = AVSampleFormat(rawValue: frame.pointee.format)
    let planar = av_sample_fmt_is_planar(format) != 0

    @inline(__always)
    func run<T>(_ type: T.Type, _ convert: (T) -> Float) {
        if planar {
            for c in 0..<channels {
                let src = UnsafeRawPointer(data[c]!).assumingMemoryBound(to: T.self) + from
                let dst = out[c] + offset
                for i in 0..<count { dst[i] = convert(src[i]) }
            }
        } else {
            let src = UnsafeRawPointer(data[0]!).assumingMemoryBound(to: T.self) + from * channels
            if channels == 2 {
                let l = out[0] + offset, r = out[1] + offset
                for i in 0..<count {
                    l[i] = convert(src[2 * i])
                    r[i] = convert(src[2 * i + 1])
                }
            } else {
                for c in 0..<channels {
                    let dst = out[c] + offset
                    for i in 0..<count { dst[i] = convert(src[i * channels + c]) }
                }
            }
        }
    }

    switch format {
    case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP:
        run(Float.self) { $0 }
    case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P:
        run(Int16.self) { Float($0) * (1.0 / 32768.0) }
    case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P:
        run(Int32.self) { Float(Double($0) * (1.0 / 2147483648.0)) }
    case AV_SAMPLE_FMT_U8, AV_SAMPLE_FMT_U8P:
        run(UInt8.self) { Float(Int($0) - 128) * (1.0 / 128.0) }
    case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP:
        run(Double.self) { Float($0) }
    case AV_SAMPLE_FMT_S64, AV_SAMPLE_FMT_S64P:
        run(Int64.self) { Float(Double($0) * (1.0 / 9223372036854775808.0)) }
    default:
        return false
    }
    return true
}
