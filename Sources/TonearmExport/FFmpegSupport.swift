// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCodecs
import TonearmCore

/// Small helpers over FFmpeg's C API shared by the probe, the remuxer and the transcoder.
enum FFmpegSupport {
    /// FFmpeg's message for an error code.
    static func message(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        tonearm_av_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

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
    static func checkReadable(_ path: String) throws(TonearmError) {
        var st = stat()
        if stat(path, &st) != 0 {
            let e = errno
            if e == ENOENT || e == ENOTDIR { throw .fileNotFound(path: path) }
            throw .notReadable(path: path, reason: String(cString: strerror(e)))
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(path: path) }
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 { throw .emptyFile(path: path) }
        if access(path, R_OK) != 0 { throw .notReadable(path: path, reason: String(cString: strerror(errno))) }
    }

    /// Opens `path` for demuxing with stream info read (an MP3 ending before an APE tag after
    /// it: ``InputOpening``). The caller closes it with `avformat_close_input`, then releases
    /// `io`. Throws the file errors of ``checkReadable(_:)`` and `notMediaFile`.
    static func openInput(_ path: String) throws(TonearmError) -> (context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?) {
        tonearm_av_log_quiet()
        try checkReadable(path)
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        let (r, io) = InputOpening.open(&ctx, path: path)
        guard r >= 0, let fc = ctx else {
            if r == tonearm_averror(EACCES) { throw .notReadable(path: path, reason: message(r)) }
            throw .notMediaFile(path: path, detail: message(r))
        }
        let info = avformat_find_stream_info(fc, nil)
        if info < 0 {
            avformat_close_input(&ctx)
            throw .notMediaFile(path: path, detail: message(info))
        }
        let name = String(cString: fc.pointee.iformat.pointee.name)
        if name == "tty" || fc.pointee.nb_streams == 0 {
            avformat_close_input(&ctx)
            throw .notMediaFile(path: path, detail: name == "tty" ? "the content looks like text" : "no streams")
        }
        return (fc, io)
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
