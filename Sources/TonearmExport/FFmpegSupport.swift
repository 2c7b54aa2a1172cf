// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCodecs
import TonearmCore

/// Small helpers over FFmpeg's C API shared by the probe, the remuxer and the transcoder.
enum FFmpegSupport {
    /// FFmpeg's message for an error code.
    static func message(_ code: Int32) -> String { InputOpening.message(code) }

    /// Every entry of an `AVDictionary`, keys as stored.
    static func entries(_ dict: OpaquePointer?) -> [String: String] {
        var out: [String: String] = [:]
        var e: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(dict, "", e, AV_DICT_IGNORE_SUFFIX) {
            out[String(cString: next.pointee.key)] = String(cString: next.pointee.value)
            e = next
        }
        return out
    }

    /// Checks that `path` is a readable, non-empty regular file, throwing the error that says why not.
    static func checkReadable(_ path: String) throws(TonearmError) { try InputOpening.checkReadable(path) }

    /// Opens `path` for demuxing with stream info read: ``InputOpening/openProbed(_:)``.
    static func openInput(_ path: String) throws(TonearmError) -> (context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?) {
        try InputOpening.openProbed(path)
    }

    /// The readable channel layout of codec parameters ("stereo", "5.1", "3 channels").
    static func layoutName(_ par: UnsafeMutablePointer<AVCodecParameters>) -> String {
        var layout = par.pointee.ch_layout
        var buf = [CChar](repeating: 0, count: 128)
        if av_channel_layout_describe(&layout, &buf, 128) >= 0 {
            return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return "\(par.pointee.ch_layout.nb_channels) channels"
    }

    /// Seconds of a timestamp in `tb`.
    static func seconds(_ ts: Int64, _ tb: AVRational) -> Double {
        Double(ts) * Double(tb.num) / Double(tb.den)
    }
}
