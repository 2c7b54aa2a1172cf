// SPDX-License-Identifier: GPL-3.0-or-later
import CFFmpeg

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
        return (avformat_open_input(&ctx, path, nil, nil), io)
    }
}
