// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg
import Glibc
import TonearmCodecs
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
    /// The artwork in ``ExportTags/artwork`` goes in a picture stream (MP3, MP4/M4A, FLAC) written
    /// right after the header, or in a `METADATA_BLOCK_PICTURE` comment (Ogg, Opus).
    func writeHeader(tags: ExportTags, language: String?, codecName: String) throws(TonearmError) {
        guard let ctx else { return }
        if fileType.tagsOnStream { tags.apply(to: &stream.pointee.metadata) } else { tags.apply(to: &ctx.pointee.metadata) }
        if fileType.tagsOnStream, let picture = tags.pictureComment {
            av_dict_set(&stream.pointee.metadata, "METADATA_BLOCK_PICTURE", picture, 0)
        }
        let pictureStream = try addPictureStream(tags.artwork)
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
        if let pictureStream, let art = tags.artwork { try writePicture(art, stream: pictureStream) }
    }

    /// The file types that hold a cover as an attached-picture stream.
    private var takesPictureStream: Bool { [.mp3, .m4a, .mp4, .flac].contains(fileType) }

    /// Adds the attached-picture stream for `artwork` (JPEG or PNG) when the container takes one.
    private func addPictureStream(_ artwork: Artwork?) throws(TonearmError) -> UnsafeMutablePointer<AVStream>? {
        guard let ctx, let artwork, takesPictureStream else { return nil }
        let codec: AVCodecID
        switch MetadataReader.sniffMIME(artwork.data) ?? artwork.mimeType {
        case "image/jpeg": codec = AV_CODEC_ID_MJPEG
        case "image/png": codec = AV_CODEC_ID_PNG
        default: return nil  // a picture format the containers cannot label: left out
        }
        // Muxers refuse a video stream without dimensions.
        guard let size = Self.imageSize(artwork.data) else { return nil }
        guard let st = avformat_new_stream(ctx, nil) else { throw .writeFailed(path: target.path, reason: "out of memory") }
        st.pointee.codecpar.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        st.pointee.codecpar.pointee.codec_id = codec
        st.pointee.codecpar.pointee.width = Int32(size.width)
        st.pointee.codecpar.pointee.height = Int32(size.height)
        st.pointee.disposition = AV_DISPOSITION_ATTACHED_PIC
        st.pointee.time_base = AVRational(num: 1, den: 90_000)
        av_dict_set(&st.pointee.metadata, "comment", "Cover (front)", 0)
        return st
    }

    /// The pixel size of a PNG (its IHDR) or JPEG (its first start-of-frame marker); nil when
    /// the bytes are neither, are cut short, or state a PNG size past PNG's 2³¹ − 1 (bytes that
    /// only start like a PNG: that size made the stream's `Int32` width trap).
    static func imageSize(_ b: [UInt8]) -> (width: Int, height: Int)? {
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }
        if b.count >= 24, b[0] == 0x89, b[1] == 0x50, b[2] == 0x4E, b[3] == 0x47 {
            let (w, h) = (be32(16), be32(20))
            return w > 0 && h > 0 && w <= Int(Int32.max) && h <= Int(Int32.max) ? (w, h) : nil
        }
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }  // no length
            // SOF0…SOF15 except DHT (C4), JPG (C8) and DAC (CC): height, then width.
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                let (h, w) = (be16(i + 5), be16(i + 7))
                return w > 0 && h > 0 ? (w, h) : nil
            }
            i += 2 + be16(i + 2)
        }
        return nil
    }

    /// Writes the cover as the picture stream's one packet (not reference-counted: the muxer
    /// copies the bytes it keeps).
    private func writePicture(_ artwork: Artwork, stream st: UnsafeMutablePointer<AVStream>) throws(TonearmError) {
        guard let ctx, let packet = av_packet_alloc() else { throw .writeFailed(path: target.path, reason: "out of memory") }
        defer { var p: UnsafeMutablePointer<AVPacket>? = packet; av_packet_free(&p) }
        var bytes = artwork.data
        let r = bytes.withUnsafeMutableBufferPointer { buf -> Int32 in
            packet.pointee.data = buf.baseAddress
            packet.pointee.size = Int32(buf.count)
            packet.pointee.stream_index = st.pointee.index
            packet.pointee.flags |= AV_PKT_FLAG_KEY
            packet.pointee.pts = 0
            packet.pointee.dts = 0
            let r = av_interleaved_write_frame(ctx, packet)
            packet.pointee.data = nil
            packet.pointee.size = 0
            return r
        }
        if r < 0 { throw .writeFailed(path: target.path, reason: "cannot write the cover: \(FFmpegSupport.message(r))") }
    }

    /// Writes one packet (timestamps already in ``stream``'s time base, stream index 0).
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(TonearmError) {
        guard let ctx else { return }
        let r = av_interleaved_write_frame(ctx, packet)
        if r < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(r)) }
        try checkIO()
    }

    /// Writes the trailer and closes the file, checking that every byte reached the disk.
    ///
    /// The file is closed even when the trailer fails (a full disk): what the I/O context still
    /// buffers is written (or fails) now, not later when this object goes — so a repair of the
    /// file after the error (the recorder's) is not overwritten by a late flush of the trailer.
    func finish() throws(TonearmError) {
        guard let ctx, headerWritten else { return }
        let r = av_write_trailer(ctx)
        let io = ctx.pointee.pb?.pointee.error ?? 0
        let c = avio_closep(&ctx.pointee.pb)
        closed = true
        if r < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(r)) }
        if io < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(io)) }
        if c < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(c)) }
    }

    /// A write error FFmpeg recorded on the I/O context (a full disk shows up here first).
    private func checkIO() throws(TonearmError) {
        guard let pb = ctx?.pointee.pb else { return }
        if pb.pointee.error < 0 { throw .writeFailed(path: target.path, reason: FFmpegSupport.message(pb.pointee.error)) }
    }
}
