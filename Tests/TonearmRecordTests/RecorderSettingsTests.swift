// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import TonearmCore
@testable import TonearmRecord

/// The recorder's settings (Apple's keys) and file types, offline: what is taken, the defaults,
/// and a typed error naming the key or the extension for what is not.
@Suite struct RecorderSettingsTests {
    private func url(_ name: String) -> URL { URL(fileURLWithPath: "/tmp/\(name)") }

    @Test func theExtensionChoosesTheFormatAndTheDefaultsAre48kStereo16Bit() throws {
        let wav = try AudioRecorder(url: url("a.wav"), settings: [:]).format
        #expect(wav.fileType == .wav && wav.formatID == kAudioFormatLinearPCM && wav.sampleRate == 48_000)
        #expect(wav.channelCount == 2 && wav.bitDepth == 16 && !wav.isFloat)
        #expect(wav.encoderName == "pcm_s16le")
        let flac = try AudioRecorder(url: url("b.FLAC"), settings: [AVSampleRateKey: 44_100.0, AVNumberOfChannelsKey: 1,
                                                                    AVLinearPCMBitDepthKey: 24]).format
        #expect(flac.fileType == .flac && flac.formatID == kAudioFormatFLAC && flac.sampleRate == 44_100)
        #expect(flac.channelCount == 1 && flac.bitDepth == 24)
        let float = try RecordingFormat(path: "c.wav", settings: [AVFormatIDKey: kAudioFormatLinearPCM, AVLinearPCMIsFloatKey: true])
        #expect(float.isFloat && float.bitDepth == 32 && float.encoderName == "pcm_f32le")
        #expect(try RecordingFormat(path: "d.wav", settings: [AVLinearPCMBitDepthKey: 24]).encoderName == "pcm_s24le")
        #expect(try RecordingFormat(path: "e.wav", settings: [AVLinearPCMBitDepthKey: NSNumber(value: 8)]).encoderName == "pcm_u8")
    }

    /// AAC, Apple Lossless and Opus: the extension's default format, Apple's ways of asking for
    /// a bit rate (total, per channel, a quality), and the lossless depth from either key.
    @Test func compressedFormatsTakeTheirBitRateOrDepthFromApplesKeys() throws {
        let m4a = try RecordingFormat(path: "a.m4a", settings: [:])
        #expect(m4a.formatID == kAudioFormatMPEG4AAC && m4a.encoderName == "aac" && m4a.bitRate == 128_000 && m4a.encoderBits == nil)
        #expect(m4a.settings[AVEncoderBitRateKey] as? Int == 128_000 && m4a.exportFileType == .m4a)
        let mono = try RecordingFormat(path: "b.aac", settings: [AVNumberOfChannelsKey: 1, AVEncoderAudioQualityKey: AVAudioQuality.high.rawValue])
        #expect(mono.formatID == kAudioFormatMPEG4AAC && mono.bitRate == 96_000 && mono.exportFileType == .aac)
        #expect(try RecordingFormat(path: "c.m4a", settings: [AVEncoderAudioQualityKey: AVAudioQuality.max]).bitRate == 256_000)
        #expect(try RecordingFormat(path: "c.m4a", settings: [AVEncoderAudioQualityKey: 0x50]).bitRate == 128_000, "between medium and high: medium")
        #expect(try RecordingFormat(path: "d.m4a", settings: [AVEncoderBitRatePerChannelKey: 80_000]).bitRate == 160_000)
        #expect(try RecordingFormat(path: "d.m4a", settings: [AVEncoderBitRateKey: 192_000, AVEncoderBitRatePerChannelKey: 80_000]).bitRate == 192_000)
        let opus = try RecordingFormat(path: "e.opus", settings: [AVLinearPCMBitDepthKey: 16])
        #expect(opus.formatID == kAudioFormatOpus && opus.encoderName == "libopus" && opus.bitRate == 96_000 && opus.exportFileType == .opus)
        #expect(try RecordingFormat(path: "f.ogg", settings: [AVFormatIDKey: kAudioFormatOpus, AVSampleRateKey: 24_000]).exportFileType == .ogg)
        let alac = try RecordingFormat(path: "g.m4a", settings: [AVFormatIDKey: kAudioFormatAppleLossless, AVEncoderBitDepthHintKey: 24])
        #expect(alac.encoderName == "alac" && alac.bitDepth == 24 && alac.encoderBits == 24 && alac.bitRate == nil)
        #expect(try RecordingFormat(path: "h.caf", settings: [AVFormatIDKey: kAudioFormatAppleLossless, AVLinearPCMBitDepthKey: 24]).bitDepth == 24)
        let caf = try RecordingFormat(path: "i.caf", settings: [:])
        #expect(caf.formatID == kAudioFormatLinearPCM && caf.encoderName == "pcm_s16le" && caf.exportFileType == .caf)
        #expect(try RecordingFormat(path: "j.caf", settings: [AVLinearPCMBitDepthKey: 8]).encoderName == "pcm_s8")
        #expect(throws: AudioRecorderError.formatDoesNotFitFile(path: "k.caf", format: "AAC", fileType: "CAF")) {
            try RecordingFormat(path: "k.caf", settings: [AVFormatIDKey: kAudioFormatMPEG4AAC])
        }
    }

    @Test func aBadSettingIsNamedWithItsValue() {
        func error(_ path: String, _ settings: [String: Any]) -> AudioRecorderError? {
            do { _ = try RecordingFormat(path: path, settings: settings); return nil } catch { return error }
        }
        #expect(error("a.wav", [AVSampleRateKey: 0]) == .invalidSetting(key: AVSampleRateKey, value: "0",
                                                                        reason: "the sample rate must be 8000–384000 Hz"))
        #expect(error("a.wav", [AVSampleRateKey: 44_100.5]) == .invalidSetting(key: AVSampleRateKey, value: "44100.5",
                                                                               reason: "not a whole number"))
        #expect(error("a.wav", [AVNumberOfChannelsKey: 9]) == .invalidSetting(key: AVNumberOfChannelsKey, value: "9",
                                                                              reason: "the channel count must be 1–8"))
        #expect(error("a.wav", [AVNumberOfChannelsKey: "two"]) == .invalidSetting(key: AVNumberOfChannelsKey, value: "two",
                                                                                  reason: "not a number"))
        #expect(error("a.wav", [AVLinearPCMBitDepthKey: 20]) == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "20",
                                                                                reason: "integer PCM is 8, 16, 24 or 32 bits"))
        #expect(error("a.wav", [AVLinearPCMIsFloatKey: true, AVLinearPCMBitDepthKey: 16])
                == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "16", reason: "floating-point PCM is 32 or 64 bits"))
        #expect(error("a.flac", [AVLinearPCMBitDepthKey: 32]) == .invalidSetting(key: AVLinearPCMBitDepthKey, value: "32",
                                                                                 reason: "FLAC is recorded at 16 or 24 bits"))
        #expect(error("a.wav", [AVLinearPCMIsBigEndianKey: true])?.description
                == "AVLinearPCMIsBigEndianKey = true: the recorder writes little-endian PCM")
        #expect(error("a.wav", [AVFormatIDKey: kAudioFormatMPEG4AAC]) == .formatDoesNotFitFile(path: "a.wav", format: "AAC", fileType: "WAV"))
        #expect(error("a.m4a", [AVSampleRateKey: 44_000])?.description
                == "AVSampleRateKey = 44000: AAC is recorded at 7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000 Hz")
        #expect(error("a.opus", [AVSampleRateKey: 44_100]) == .invalidSetting(key: AVSampleRateKey, value: "44100",
                                                                              reason: "Opus is recorded at 8000, 12000, 16000, 24000, 48000 Hz"))
        #expect(error("a.m4a", [AVEncoderBitRateKey: 1_000_000])?.description
                == "AVEncoderBitRateKey = 1000000: AAC with 2 channels takes 16000–640000 bits a second")
        #expect(error("a.opus", [AVNumberOfChannelsKey: 1, AVEncoderBitRateKey: 300_000]) == .invalidSetting(
            key: AVEncoderBitRateKey, value: "300000", reason: "Opus with 1 channel takes 6000–256000 bits a second"))
        #expect(error("a.m4a", [AVEncoderBitRatePerChannelKey: 1_000]) == .invalidSetting(
            key: AVEncoderBitRatePerChannelKey, value: "1000", reason: "AAC takes 8000–320000 bits a second per channel"))
        #expect(error("a.m4a", [AVEncoderAudioQualityKey: 200]) == .invalidSetting(
            key: AVEncoderAudioQualityKey, value: "200", reason: "an AVAudioQuality is 0 (min) to 127 (max)"))
        #expect(error("a.m4a", [AVFormatIDKey: kAudioFormatAppleLossless, AVEncoderBitDepthHintKey: 20]) == .invalidSetting(
            key: AVEncoderBitDepthHintKey, value: "20", reason: "Apple Lossless is recorded at 16 or 24 bits"))
        #expect(error("a.caf", [AVFormatIDKey: kAudioFormatAppleLossless, AVLinearPCMIsFloatKey: true]) == .invalidSetting(
            key: AVLinearPCMIsFloatKey, value: "true", reason: "Apple Lossless holds integer samples only"))
        #expect(error("a.wav", [AVFormatIDKey: 1234]) == .invalidSetting(key: AVFormatIDKey, value: "1234",
                                                                         reason: "not a format the recorder knows"))
    }

    @Test func aFileTypeTheRecorderDoesNotWriteIsNamed() {
        let all = ["wav", "flac", "caf", "m4a", "aac", "opus", "ogg"]
        #expect(throws: AudioRecorderError.unsupportedFileType(path: "/tmp/x.mp3", extension: "mp3", supported: all)) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.mp3"), settings: [:])
        }
        #expect(throws: AudioRecorderError.unsupportedFileType(path: "/tmp/noext", extension: "", supported: all)) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/noext"), settings: [:])
        }
        #expect(throws: AudioRecorderError.formatDoesNotFitFile(path: "/tmp/x.flac", format: "linear PCM", fileType: "FLAC")) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.flac"), settings: [AVFormatIDKey: kAudioFormatLinearPCM])
        }
        #expect(throws: TonearmError.invalidURL("http://host/x.wav")) {
            try AudioRecorder(url: URL(string: "http://host/x.wav")!, settings: [:])
        }
        #expect(throws: AudioRecorderError.formatDoesNotFitFile(path: "/tmp/x.opus", format: "AAC", fileType: "OPUS")) {
            try AudioRecorder(url: URL(fileURLWithPath: "/tmp/x.opus"), settings: [AVFormatIDKey: kAudioFormatMPEG4AAC])
        }
        #expect(AudioRecorderError.unsupportedFileType(path: "x.mp3", extension: "mp3", supported: all).description
                == "x.mp3: cannot record to a '.mp3' file; the recorder writes .wav, .flac, .caf, .m4a, .aac, .opus, .ogg")
    }

    /// A recorder that was never started records nothing: no file, not recording, time 0.
    @Test func nothingIsCreatedBeforePrepare() throws {
        let path = "/tmp/tonearm-never-\(getpid()).wav"
        let r = try AudioRecorder(url: URL(fileURLWithPath: path), settings: [:])
        #expect(!r.isRecording && r.currentTime == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
        r.stop()
        #expect(!r.deleteRecording())
    }
}
