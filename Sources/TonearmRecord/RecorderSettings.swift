// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TonearmExport

// Apple's settings keys for `AVAudioRecorder(url:settings:)` (AVAudioSettings.h), by the same
// names and with the same string values, so that ported code compiles unchanged.

/// The format (an `AudioFormatID`, e.g. ``kAudioFormatLinearPCM``, ``kAudioFormatFLAC``).
public let AVFormatIDKey = "AVFormatIDKey"
/// The sample rate in hertz (a number).
public let AVSampleRateKey = "AVSampleRateKey"
/// The channel count (a number).
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
/// Bits per sample for linear PCM (8, 16, 24, 32) and FLAC (16, 24).
public let AVLinearPCMBitDepthKey = "AVLinearPCMBitDepthKey"
/// Whether linear PCM is floating point (with a bit depth of 32 or 64).
public let AVLinearPCMIsFloatKey = "AVLinearPCMIsFloatKey"
/// Whether linear PCM is big-endian (WAV is little-endian only: true is refused).
public let AVLinearPCMIsBigEndianKey = "AVLinearPCMIsBigEndianKey"
/// Whether linear PCM is non-interleaved (files are interleaved: ignored, as Apple does for files).
public let AVLinearPCMIsNonInterleaved = "AVLinearPCMIsNonInterleaved"
/// The encoder's quality for AAC and Opus, an ``AVAudioQuality`` raw value (`min` 0 … `max`
/// 0x7F), chosen as a bit rate per channel when no bit rate is given; ignored for PCM and lossless.
public let AVEncoderAudioQualityKey = "AVEncoderAudioQualityKey"
/// The bit rate of AAC and Opus in bits a second, all channels together; ignored for PCM and lossless.
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"
/// The bit rate of AAC and Opus in bits a second for each channel (Apple's alternative to
/// ``AVEncoderBitRateKey``; that key wins when both are given).
public let AVEncoderBitRatePerChannelKey = "AVEncoderBitRatePerChannelKey"
/// Bits per sample for the lossless encoders (ALAC and FLAC: 16 or 24); read before
/// ``AVLinearPCMBitDepthKey``, which they also take.
public let AVEncoderBitDepthHintKey = "AVEncoderBitDepthHintKey"

/// Apple's encoder qualities (`AVAudioQuality`), for ``AVEncoderAudioQualityKey``.
public enum AVAudioQuality: Int, Sendable, CaseIterable {
    case min = 0, low = 0x20, medium = 0x40, high = 0x60, max = 0x7F
}

/// Apple's `AudioFormatID`s (four-character codes) the settings may name.
public let kAudioFormatLinearPCM: UInt32 = 0x6C70_636D  // 'lpcm'
public let kAudioFormatFLAC: UInt32 = 0x666C_6163  // 'flac'
public let kAudioFormatMPEG4AAC: UInt32 = 0x6161_6320  // 'aac '
public let kAudioFormatAppleLossless: UInt32 = 0x616C_6163  // 'alac'
public let kAudioFormatOpus: UInt32 = 0x6F70_7573  // 'opus'

/// What is wrong with an ``AudioRecorder``'s URL or settings, named: the key and the value given,
/// or the file's extension.
public enum AudioRecorderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A setting's value cannot be recorded: `key` (Apple's name), the `value` given, and why.
    case invalidSetting(key: String, value: String, reason: String)
    /// The file's extension names no type the recorder writes (`supported`: those it does).
    case unsupportedFileType(path: String, extension: String, supported: [String])
    /// The settings' format cannot be written to a file of this type.
    case formatDoesNotFitFile(path: String, format: String, fileType: String)
    /// Recording cannot start from `source` (its name, or "the default source"): no sound server,
    /// no such source, a refused stream — `reason` says which.
    case sourceUnavailable(source: String, reason: String)

    public var description: String {
        switch self {
        case .invalidSetting(let k, let v, let r): "\(k) = \(v): \(r)"
        case .unsupportedFileType(let p, let e, let s):
            "\(p): cannot record to a '.\(e)' file; the recorder writes \(s.map { "." + $0 }.joined(separator: ", "))"
        case .formatDoesNotFitFile(let p, let f, let t): "\(p): \(f) cannot be written to a \(t) file"
        case .sourceUnavailable(let s, let r): "cannot record from \(s): \(r)"
        }
    }
}

/// The file and format a recording is written in, read from Apple's settings and the URL's
/// extension (``init(path:settings:)``).
///
/// What each file type holds (the first is what the extension records without ``AVFormatIDKey``):
/// `.wav` linear PCM; `.flac` FLAC; `.caf` linear PCM or Apple Lossless; `.m4a` AAC or Apple
/// Lossless; `.aac` AAC (ADTS); `.opus` and `.ogg` Opus. An MPEG-4 file (`.m4a`) is playable once
/// the recording is stopped (its index is written at the end, as AVAudioRecorder's is); the
/// others are readable up to the last frame written at any moment.
public struct RecordingFormat: Sendable, Hashable {
    /// What the file is.
    public enum FileType: String, Sendable, Hashable, CaseIterable {
        case wav, flac, caf, m4a, aac, opus, ogg

        /// The formats the type holds, the extension's default first.
        var formats: [UInt32] {
            switch self {
            case .wav: [kAudioFormatLinearPCM]
            case .flac: [kAudioFormatFLAC]
            // (FFmpeg's CAF muxer does not write AAC.)
            case .caf: [kAudioFormatLinearPCM, kAudioFormatAppleLossless]
            case .m4a: [kAudioFormatMPEG4AAC, kAudioFormatAppleLossless]
            case .aac: [kAudioFormatMPEG4AAC]
            case .opus, .ogg: [kAudioFormatOpus]
            }
        }
    }

    public var fileType: FileType
    /// The format's `AudioFormatID` (``kAudioFormatLinearPCM``, ``kAudioFormatFLAC``,
    /// ``kAudioFormatMPEG4AAC``, ``kAudioFormatAppleLossless`` or ``kAudioFormatOpus``).
    public var formatID: UInt32
    public var sampleRate: Int
    public var channelCount: Int
    /// Bits per sample in the file (PCM and lossless); 0 for AAC and Opus.
    public var bitDepth: Int
    /// Floating-point samples (linear PCM only).
    public var isFloat: Bool
    /// Bits a second, all channels together (AAC and Opus); nil for PCM and lossless.
    public var bitRate: Int?

    /// The sample rates taken (PulseAudio's range), in hertz.
    public static let sampleRates = 8_000...384_000
    /// The channel counts taken.
    public static let channelCounts = 1...8
    /// The rates AAC is written at (those of MPEG-4's sampling frequency table that FFmpeg's
    /// encoder takes).
    public static let aacSampleRates = [7_350, 8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000,
                                        64_000, 88_200, 96_000]
    /// The rates Opus is written at (its encoder's own; others would be resampled by it).
    public static let opusSampleRates = [8_000, 12_000, 16_000, 24_000, 48_000]
    /// Bits a second per channel, AAC and Opus.
    public static let aacBitRatesPerChannel = 8_000...320_000
    public static let opusBitRatesPerChannel = 6_000...256_000

    /// Reads `settings` (Apple's keys; missing ones default to 48 kHz, stereo, 16-bit integer,
    /// the format the extension names, and a `medium` quality for AAC and Opus) for a file at
    /// `path`. Throws ``AudioRecorderError`` naming the key or the extension that is wrong; keys it
    /// does not know, and keys that do not apply to the format (a PCM bit depth for AAC), are
    /// ignored, as Apple's recorder ignores them.
    public init(path: String, settings: [String: Any]) throws(AudioRecorderError) {
        let ext = (path as NSString).pathExtension.lowercased()
        let type: FileType
        switch ext {
        case "wav", "wave": type = .wav
        case "flac": type = .flac
        case "caf": type = .caf
        case "m4a": type = .m4a
        case "aac", "adts": type = .aac
        case "opus": type = .opus
        case "ogg", "oga": type = .ogg
        default: throw .unsupportedFileType(path: path, extension: ext, supported: FileType.allCases.map(\.rawValue))
        }
        fileType = type
        func number(_ key: String) throws(AudioRecorderError) -> Double? {
            guard let v = settings[key] else { return nil }
            switch v {
            case let x as Int: return Double(x)
            case let x as Double: return x
            case let x as Float: return Double(x)
            case let x as UInt32: return Double(x)
            case let x as Int32: return Double(x)
            case let x as UInt: return Double(x)
            case let x as Int64: return Double(x)
            case let x as NSNumber: return x.doubleValue
            case let x as AVAudioQuality: return Double(x.rawValue)
            default: throw .invalidSetting(key: key, value: "\(v)", reason: "not a number")
            }
        }
        func flag(_ key: String) throws(AudioRecorderError) -> Bool? {
            guard let v = settings[key] else { return nil }
            if let b = v as? Bool { return b }
            if let n = try number(key) { return n != 0 }
            return nil
        }
        func integer(_ key: String, _ value: Double) throws(AudioRecorderError) -> Int {
            guard value.isFinite, value == value.rounded(), abs(value) < 1e9 else {
                throw .invalidSetting(key: key, value: "\(value)", reason: "not a whole number")
            }
            return Int(value)
        }
        func whole(_ key: String) throws(AudioRecorderError) -> Int? {
            try number(key).map { v throws(AudioRecorderError) in try integer(key, v) }
        }

        let id: UInt32
        if let raw = try number(AVFormatIDKey) {
            guard raw >= 0, raw <= Double(UInt32.max), raw == raw.rounded() else {
                throw .invalidSetting(key: AVFormatIDKey, value: "\(raw)", reason: "not an AudioFormatID")
            }
            id = UInt32(raw)
        } else {
            id = type.formats[0]
        }
        guard let name = Self.formatNames[id] else {
            throw .invalidSetting(key: AVFormatIDKey, value: Self.fourCC(id), reason: "not a format the recorder knows")
        }
        guard type.formats.contains(id) else {
            throw .formatDoesNotFitFile(path: path, format: name, fileType: type.rawValue.uppercased())
        }
        formatID = id

        let rate = try whole(AVSampleRateKey) ?? 48_000
        guard Self.sampleRates.contains(rate) else {
            throw .invalidSetting(key: AVSampleRateKey, value: "\(rate)",
                                  reason: "the sample rate must be \(Self.sampleRates.lowerBound)–\(Self.sampleRates.upperBound) Hz")
        }
        if id == kAudioFormatMPEG4AAC, !Self.aacSampleRates.contains(rate) {
            throw .invalidSetting(key: AVSampleRateKey, value: "\(rate)",
                                  reason: "AAC is recorded at \(Self.aacSampleRates.map(String.init).joined(separator: ", ")) Hz")
        }
        if id == kAudioFormatOpus, !Self.opusSampleRates.contains(rate) {
            throw .invalidSetting(key: AVSampleRateKey, value: "\(rate)",
                                  reason: "Opus is recorded at \(Self.opusSampleRates.map(String.init).joined(separator: ", ")) Hz")
        }
        sampleRate = rate
        let channels = try whole(AVNumberOfChannelsKey) ?? 2
        guard Self.channelCounts.contains(channels) else {
            throw .invalidSetting(key: AVNumberOfChannelsKey, value: "\(channels)",
                                  reason: "the channel count must be \(Self.channelCounts.lowerBound)–\(Self.channelCounts.upperBound)")
        }
        channelCount = channels

        var float = false
        var bits = 0
        var rateBits: Int?
        switch id {
        case kAudioFormatLinearPCM:
            float = try flag(AVLinearPCMIsFloatKey) ?? false
            bits = try whole(AVLinearPCMBitDepthKey) ?? (float ? 32 : 16)
            if float {
                guard bits == 32 || bits == 64 else {
                    throw .invalidSetting(key: AVLinearPCMBitDepthKey, value: "\(bits)", reason: "floating-point PCM is 32 or 64 bits")
                }
            } else {
                guard [8, 16, 24, 32].contains(bits) else {
                    throw .invalidSetting(key: AVLinearPCMBitDepthKey, value: "\(bits)", reason: "integer PCM is 8, 16, 24 or 32 bits")
                }
            }
            if try flag(AVLinearPCMIsBigEndianKey) == true {
                throw .invalidSetting(key: AVLinearPCMIsBigEndianKey, value: "true", reason: "the recorder writes little-endian PCM")
            }
        case kAudioFormatFLAC, kAudioFormatAppleLossless:
            let key = settings[AVEncoderBitDepthHintKey] != nil ? AVEncoderBitDepthHintKey : AVLinearPCMBitDepthKey
            bits = try whole(key) ?? 16
            if try flag(AVLinearPCMIsFloatKey) == true {
                throw .invalidSetting(key: AVLinearPCMIsFloatKey, value: "true", reason: "\(name) holds integer samples only")
            }
            guard bits == 16 || bits == 24 else {
                throw .invalidSetting(key: key, value: "\(bits)", reason: "\(name) is recorded at 16 or 24 bits")
            }
        default:
            // AAC and Opus: a bit rate, from the total, the rate per channel, or the quality.
            let range = id == kAudioFormatOpus ? Self.opusBitRatesPerChannel : Self.aacBitRatesPerChannel
            let total = range.lowerBound * channels...range.upperBound * channels
            if let b = try whole(AVEncoderBitRateKey) {
                guard total.contains(b) else {
                    throw .invalidSetting(key: AVEncoderBitRateKey, value: "\(b)",
                                          reason: "\(name) with \(channels) channel\(channels == 1 ? "" : "s") takes \(total.lowerBound)–\(total.upperBound) bits a second")
                }
                rateBits = b
            } else if let b = try whole(AVEncoderBitRatePerChannelKey) {
                guard range.contains(b) else {
                    throw .invalidSetting(key: AVEncoderBitRatePerChannelKey, value: "\(b)",
                                          reason: "\(name) takes \(range.lowerBound)–\(range.upperBound) bits a second per channel")
                }
                rateBits = b * channels
            } else {
                let q = try whole(AVEncoderAudioQualityKey) ?? AVAudioQuality.medium.rawValue
                guard (AVAudioQuality.min.rawValue...AVAudioQuality.max.rawValue).contains(q) else {
                    throw .invalidSetting(key: AVEncoderAudioQualityKey, value: "\(q)", reason: "an AVAudioQuality is 0 (min) to 127 (max)")
                }
                rateBits = Self.bitRatePerChannel(formatID: id, quality: q) * channels
            }
        }
        bitDepth = bits
        isFloat = float
        bitRate = rateBits
    }

    /// The formats by name, for messages.
    static let formatNames: [UInt32: String] = [kAudioFormatLinearPCM: "linear PCM", kAudioFormatFLAC: "FLAC",
                                                kAudioFormatMPEG4AAC: "AAC", kAudioFormatAppleLossless: "Apple Lossless",
                                                kAudioFormatOpus: "Opus"]

    /// The bit rate per channel an ``AVAudioQuality`` value stands for: the nearest quality at or
    /// below it — AAC 32, 48, 64, 96, 128 kb/s a channel, Opus 16, 24, 48, 64, 96 (the medium
    /// ones, the default, are what an AAC or Opus encoder's authors call transparent for most music).
    static func bitRatePerChannel(formatID: UInt32, quality: Int) -> Int {
        let level = AVAudioQuality.allCases.lastIndex { $0.rawValue <= quality } ?? 0
        return (formatID == kAudioFormatOpus ? [16, 24, 48, 64, 96] : [32, 48, 64, 96, 128])[level] * 1000
    }

    /// FFmpeg's encoder for the format.
    var encoderName: String {
        switch formatID {
        case kAudioFormatFLAC: return "flac"
        case kAudioFormatMPEG4AAC: return "aac"
        case kAudioFormatAppleLossless: return "alac"
        case kAudioFormatOpus: return "libopus"
        default:
            if isFloat { return bitDepth == 64 ? "pcm_f64le" : "pcm_f32le" }
            switch bitDepth {
            case 8: return fileType == .caf ? "pcm_s8" : "pcm_u8"
            case 24: return "pcm_s24le"
            case 32: return "pcm_s32le"
            default: return "pcm_s16le"
            }
        }
    }

    /// The bits an encoder is asked for: the depth for PCM and lossless, none for lossy.
    var encoderBits: Int? { bitRate == nil ? bitDepth : nil }

    var exportFileType: ExportFileType {
        switch fileType {
        case .wav: .wav
        case .flac: .flac
        case .caf: .caf
        case .m4a: .m4a
        case .aac: .aac
        case .opus: .opus
        case .ogg: .ogg
        }
    }

    /// The format in a few words: `FLAC, 48000 Hz, 16-bit, 2 ch`, `AAC in M4A, 44100 Hz, 128 kb/s,
    /// 1 ch`, `WAV float, 48000 Hz, 32-bit, 2 ch`.
    public var summary: String {
        let name = Self.formatNames[formatID] ?? Self.fourCC(formatID)
        let container = fileType.rawValue.uppercased()
        var s: String
        switch formatID {
        case kAudioFormatLinearPCM: s = fileType == .wav ? "WAV" : "linear PCM in \(container)"
        case kAudioFormatFLAC: s = "FLAC"
        case kAudioFormatOpus: s = fileType == .opus ? "Opus" : "Opus in \(container)"
        default: s = "\(name) in \(container)"
        }
        if isFloat { s += " float" }
        s += ", \(sampleRate) Hz, "
        s += bitRate.map { "\($0 / 1000) kb/s" } ?? "\(bitDepth)-bit"
        return s + ", \(channelCount) ch"
    }

    /// Apple's settings for this format (what ``AudioRecorder/settings`` answers).
    public var settings: [String: any Sendable] {
        var s: [String: any Sendable] = [AVFormatIDKey: formatID, AVSampleRateKey: Double(sampleRate),
                                         AVNumberOfChannelsKey: channelCount]
        switch formatID {
        case kAudioFormatLinearPCM:
            s[AVLinearPCMBitDepthKey] = bitDepth
            s[AVLinearPCMIsFloatKey] = isFloat
            s[AVLinearPCMIsBigEndianKey] = false
        case kAudioFormatFLAC, kAudioFormatAppleLossless:
            s[AVLinearPCMBitDepthKey] = bitDepth
            s[AVEncoderBitDepthHintKey] = bitDepth
        default:
            s[AVEncoderBitRateKey] = bitRate ?? 0
        }
        return s
    }

    /// An `AudioFormatID` as its four characters when they are printable ('aac '), else the number.
    static func fourCC(_ id: UInt32) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8((id >> UInt32($0)) & 0xFF) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "\(id)" }
        return "'" + String(decoding: bytes, as: UTF8.self) + "'"
    }
}
