// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCore

/// An FFmpeg muxer writing one audio stream to an export's temporary file. Used on one worker
/// thread only. Every failure is a `writeFailed` naming the target path (the user's), with
/// FFmpeg's or the system's reason (disk full, read-only file system, …).
final class MuxerOutput {
    private var ctx: UnsafeMutablePointer<AVFormatContext>?
    let stream: UnsafeMutablePointer<AVStream>
    private let target: OutputTarget
    private let fileType: ExportFileType
    private var headerWritten = false
    private var closed = false

    /// Creates the muxer and its one stream (parameters set by the caller before ``writeHeader(tags:)``).
    init(fileType: ExportFileType, target: OutputTarget) throws(TonearmError) {
        self.target = target
        self.fileType = fileType
        var oc: UnsafeMutablePointer<AVFormatContext>?
        let r = avformat_alloc_output_context2(&oc, nil, fileType.muxerName, target.temporaryPath)
        guard r >= 0, let oc else {
            throw .writeFailed(path: target.path, reason: "no \(fileType) muxer in this FFmpeg build (\(FFmpegSupport.message(r)))")
        }
        guard let st = avformat_new_stream(oc, nil) else {
            avformat_free_context(oc)
            throw .writeFailed(path: target.path, reason: "out of memory")
        }
        ctx = oc
        stream = st
    }

    /// Whether the container wants codec configuration out of band (MP4, Matroska).
    var needsGlobalHeader: Bool {
        guard let ctx else { return false }
        return (ctx.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER) != 0
    }

    deinit {
        if let ctx {
            if !closed, ctx.pointee.pb != nil { avio_closep(&ctx.pointee.pb) }
            avformat_free_context(ctx)
        }
    }

    /// Opens the temporary file, sets the tags and the stream's language, writes the header.
    /// `codecName` is for the incompatibility message when the muxer refuses the codec.
    func writeHeader(tags: ExportTags, language: String?, codecName: String) throws(TonearmError) {
        guard let ctx else { return }
        if fileType.tagsOnStream { tags.apply(to: &stream.pointee.metadata) } else { tags.apply(to: &ctx.pointee.metadata) }
        if let language { av_dict_set(&stream.pointee.metadata, "language", language, 0) }
        let r = avio_open(&ctx.pointee.pb, target.temporaryPath, AVIO_FLAG_WRITE)
        if r < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(r)) }
        var options: OpaquePointer?
        // AIFF carries only title, author and comment in its own chunks: full tags need ID3v2.
        if fileType == .aiff { av_dict_set(&options, "write_id3v2", "1", 0) }
        let h = avformat_write_header(ctx, &options)
        av_dict_free(&options)
        if h < 0 {
            if h == tonearm_averror(ENOSPC) || h == tonearm_averror(EIO) || h == tonearm_averror(EROFS) {
                throw .writeFailed(path: target.path, reason: FFmpegSupport.message(h))
            }
            throw .incompatibleFileType(path: target.path, codec: codecName, fileType: fileType.rawValue,
                                        compatible: ExportFileType.passthroughTypes(for: codecName).map(\.rawValue))
        }
        headerWritten = true
    }

    /// Writes one packet (timestamps already in ``stream``'s time base, stream index 0).
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(TonearmError) {
        guard let ctx else { return }
        let r = av_interleaved_write_frame(ctx, packet)
        if r < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(r)) }
        try checkIO()
    }

    /// Writes the trailer and closes the file, checking that every byte reached the disk.
    func finish() throws(TonearmError) {
        guard let ctx, headerWritten else { return }
        let r = av_write_trailer(ctx)
        if r < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(r)) }
        try checkIO()
        let c = avio_closep(&ctx.pointee.pb)
        closed = true
        if c < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(c)) }
    }

    /// A write error FFmpeg recorded on the I/O context (a full disk shows up here first).
    private func checkIO() throws(TonearmError) {
        guard let pb = ctx?.pointee.pb else { return }
        if pb.pointee.error < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(pb.pointee.error)) }
    }
}
