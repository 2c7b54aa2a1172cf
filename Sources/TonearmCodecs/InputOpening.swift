// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// Opening a file by path for demuxing, as `avformat_open_input(&ctx, path, nil, nil)` does,
/// except that an MP3 (or ADTS) file followed by an APE tag is read through Tonearm's own I/O,
/// which ends the file where the tag begins (``ContainerSniffer/audioEnd(head:file:)``): FFmpeg
/// would hand the tag's bytes on as audio packets — to a decoder, or copied into a remuxed file.
package enum InputOpening {
    /// Opens `path` into `ctx` (nil on entry); returns FFmpeg's result and the custom I/O when
    /// one was used, which the caller keeps until after `avformat_close_input` (releasing it
    /// then frees it). `head`: the file's first bytes when already read.
    package static func open(_ ctx: inout UnsafeMutablePointer<AVFormatContext>?, path: String,
                             head: [UInt8]? = nil) -> (result: Int32, io: AnyObject?) {
        var io: AVIOBridge?
        if let file = TagFileReader(path: path),
           let end = ContainerSniffer.audioEnd(head: head ?? (file.read(at: 0, count: min(file.size, 4096)) ?? []), file: file) {
            guard let bridge = AVIOBridge(reader: AVIOFileReader(file: file, end: end), bufferSize: 32 * 1024),
                  let custom = avformat_alloc_context() else { return (tonearm_averror(ENOMEM), nil) }
            custom.pointee.pb = bridge.context
            custom.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
            ctx = custom
            io = bridge
        }
        InputOpenCounter.noteOpen(path)
        return (avformat_open_input(&ctx, path, nil, nil), io)
    }

    /// FFmpeg's message for an error code.
    package static func message(_ code: Int32) -> String {
        var buf = [CChar](repeating: 0, count: 256)
        tonearm_av_strerror(code, &buf, buf.count)
        return String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Checks that `path` is a readable, non-empty regular file, throwing the error that says why not.
    package static func checkReadable(_ path: String) throws(TonearmError) {
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

    /// Opens `path` for demuxing with stream info read (through ``open(_:path:head:)``). The
    /// caller closes it with `avformat_close_input`, then releases `io`. Throws the file errors
    /// of ``checkReadable(_:)`` and `notMediaFile`. The context ``ProbedInputs`` keeps for this
    /// file, when there is one, is taken instead of opening it again; when another opener took
    /// it, what its probe found (``ProbedInputs/findings(path:)``) is copied into the newly
    /// opened context instead of probing the file again (MP4/MOV and Matroska/WebM whose
    /// streams match; any other file is probed).
    package static func openProbed(_ path: String) throws(TonearmError) -> (context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject?) {
        tonearm_av_log_quiet()
        if let kept = ProbedInputs.take(path: path) { return kept }
        try checkReadable(path)
        var ctx: UnsafeMutablePointer<AVFormatContext>? = nil
        let (r, io) = open(&ctx, path: path)
        guard r >= 0, let fc = ctx else {
            if r == tonearm_averror(EACCES) { throw .notReadable(path: path, reason: message(r)) }
            throw .notMediaFile(path: path, detail: message(r))
        }
        if let findings = ProbedInputs.findings(path: path), findings.matches(fc), findings.apply(to: fc) {
            return (fc, io)
        }
        InputOpenCounter.noteProbe(path)
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

    /// Opens `source` (a network download, say) for demuxing with stream info read, through a
    /// custom AVIOContext; `name` (the URL) names it in messages. The caller closes the context
    /// with `avformat_close_input`, then releases `io`. A failure of the source is thrown as it
    /// is (``TonearmError/network(url:failure:)``), not as "not a media file". FFmpeg opens no
    /// other resource the bytes may name (no protocol is allowed).
    package static func openProbed(byteSource source: any ByteSource, name: String) throws(TonearmError)
        -> (context: UnsafeMutablePointer<AVFormatContext>, io: AnyObject) {
        tonearm_av_log_quiet()
        let reader = AVIOByteSourceReader(source: source)
        guard let io = AVIOBridge(reader: reader, bufferSize: 64 * 1024), let custom = avformat_alloc_context() else {
            throw .decodeFailed(path: name, detail: "out of memory")
        }
        custom.pointee.pb = io.context
        custom.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        var ctx: UnsafeMutablePointer<AVFormatContext>? = custom
        var options: OpaquePointer?
        av_dict_set(&options, "protocol_whitelist", "tonearm-none", 0)
        let r = avformat_open_input(&ctx, nil, nil, &options)
        av_dict_free(&options)
        guard r >= 0, let fc = ctx else {
            if let f = reader.failure { throw f }
            throw .notMediaFile(path: name, detail: message(r))
        }
        let info = avformat_find_stream_info(fc, nil)
        if info < 0 || fc.pointee.nb_streams == 0 {
            avformat_close_input(&ctx)
            if let f = reader.failure { throw f }
            throw .notMediaFile(path: name, detail: info < 0 ? message(info) : "no streams")
        }
        if let f = reader.failure {
            avformat_close_input(&ctx)
            throw f
        }
        return (fc, io)
    }
}
