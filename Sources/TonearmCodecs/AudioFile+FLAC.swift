// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Glibc
import TonearmCore

extension AudioFile {
    /// What opening a FLAC file without FFmpeg gives ``AudioFile``.
    struct NativeFLAC {
        var decoder: FLACDecoder
        var format: SourceFormat
        var processingFormat: AudioFormat
        var length: AudioFramePosition
        var warnings: [AudioWarning]
        var metadata: AudioMetadata
    }

    /// Whether the Swift FLAC decoder reads the file and it holds no picture FFmpeg would list
    /// as a stream: then its one stream is the audio (`tonearm info` lists it without FFmpeg).
    package var isFLACWithoutPictures: Bool { (innermostDecoder as? FLACDecoder)?.pictureCount == 0 }

    /// STREAMINFO's length of a FLAC file the Swift decoder reads (more than ``length`` when the
    /// file is cut short), else ``length``.
    package var flacStatedFrames: AudioFramePosition { (innermostDecoder as? FLACDecoder)?.info.totalFrames ?? length }

    /// Opens a local `.flac` file with ``FLACDecoder``, or nil to leave it to FFmpeg. FFmpeg
    /// still reads: files named otherwise; files ``FLACHeader`` does not read as FFmpeg would
    /// (an ID3v2 tag before `fLaC`, more than two channels, a channel-mask or chapter comment, a
    /// picture in the comments, damaged blocks, an unknown length); files the decoder refuses
    /// (more than 24 bits per sample, block sizes outside 16…65535, no intact frame at the
    /// start or near the end). FLAC in Ogg and in Matroska is FFmpeg's too.
    static func openFLAC(path: String) -> NativeFLAC? {
        guard (path as NSString).pathExtension.lowercased() == "flac",
              let file = TagFileReader(path: path), let header = FLACHeader(file) else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard let decoder = FLACDecoder(name: path, fd: fd, size: file.size, ownsFD: true) else { return nil }
        let info = decoder.info
        guard info.sampleRate == header.sampleRate, info.channels == header.channels,
              info.bitsPerSample == header.bitsPerSample, info.totalFrames == header.totalFrames else { return nil }
        decoder.pictureCount = header.pictures.count
        let layout: AudioChannelLayout = info.channels == 1 ? .mono : .stereo
        return NativeFLAC(
            decoder: decoder, format: header.sourceFormat(fileSize: file.size),
            processingFormat: AudioFormat(sampleRate: Double(info.sampleRate), channelCount: info.channels, channelLayout: layout),
            length: decoder.length, warnings: decoder.takeWarnings(), metadata: header.metadata(file: file))
    }
}
