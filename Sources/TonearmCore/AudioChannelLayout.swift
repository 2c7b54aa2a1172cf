// SPDX-License-Identifier: GPL-3.0-or-later

/// Where one channel of a stream belongs: a speaker position, named as FFmpeg names it
/// (`av_channel_name`: "FL", "LFE", "SL", …).
public enum AudioChannelPosition: String, Sendable, Hashable, Codable, CaseIterable {
    case frontLeft = "FL", frontRight = "FR", frontCenter = "FC", lowFrequency = "LFE"
    case backLeft = "BL", backRight = "BR", frontLeftOfCenter = "FLC", frontRightOfCenter = "FRC"
    case backCenter = "BC", sideLeft = "SL", sideRight = "SR", topCenter = "TC"
    case topFrontLeft = "TFL", topFrontCenter = "TFC", topFrontRight = "TFR"
    case topBackLeft = "TBL", topBackCenter = "TBC", topBackRight = "TBR"
    case stereoLeft = "DL", stereoRight = "DR", wideLeft = "WL", wideRight = "WR"
    case surroundDirectLeft = "SDL", surroundDirectRight = "SDR", lowFrequency2 = "LFE2"
    case topSideLeft = "TSL", topSideRight = "TSR"
    case bottomFrontCenter = "BFC", bottomFrontLeft = "BFL", bottomFrontRight = "BFR"
    /// A channel whose position the file does not say (or one Tonearm has no name for).
    case unknown = "UNK"
}

/// The speaker position of each channel of a stream, in the order the samples are interleaved
/// (the counterpart of FFmpeg's `AVChannelLayout` in native or custom order).
///
/// ``AudioFormat/channelLayout`` carries it from the decoder through the engine to the output
/// driver, which places the channels by it (PulseAudio: the stream's channel map).
public struct AudioChannelLayout: Sendable, Hashable, Codable, CustomStringConvertible {
    /// One position per channel, in sample order.
    public var positions: [AudioChannelPosition]

    public init(_ positions: [AudioChannelPosition]) { self.positions = positions }

    public var channelCount: Int { positions.count }

    /// The layout's common name ("5.1", "stereo", "7.1", …) as FFmpeg names it, or nil when it
    /// is not one of ``named``.
    public var name: String? { Self.named.first { $0.layout == self }?.name }

    /// The name, or the positions joined by `+` ("FL+FR+LFE2").
    public var description: String { name ?? positions.map(\.rawValue).joined(separator: "+") }

    /// The layout FFmpeg takes for `channelCount` channels when a file does not say
    /// (`av_channel_layout_default`); nil for counts it has no default for.
    public static func defaultLayout(channelCount: Int) -> AudioChannelLayout? {
        switch channelCount {
        case 1: mono
        case 2: stereo
        case 3: twoPointOne
        case 4: AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter])
        case 5: fivePointZeroBack
        case 6: fivePointOneBack
        case 7: sixPointOne
        case 8: sevenPointOne
        default: nil
        }
    }

    /// The layout for `name` (one of ``named``), nil for another name.
    public init?(named name: String) {
        guard let found = Self.named.first(where: { $0.name == name }) else { return nil }
        self = found.layout
    }

    private typealias P = AudioChannelPosition
    public static let mono = AudioChannelLayout([P.frontCenter])
    public static let stereo = AudioChannelLayout([P.frontLeft, .frontRight])
    public static let twoPointOne = AudioChannelLayout([P.frontLeft, .frontRight, .lowFrequency])
    public static let surround = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter])
    public static let quad = AudioChannelLayout([P.frontLeft, .frontRight, .backLeft, .backRight])
    public static let quadSide = AudioChannelLayout([P.frontLeft, .frontRight, .sideLeft, .sideRight])
    public static let fivePointZeroBack = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight])
    public static let fivePointZeroSide = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .sideLeft, .sideRight])
    public static let fivePointOneBack = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                            .backLeft, .backRight])
    public static let fivePointOneSide = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                            .sideLeft, .sideRight])
    public static let sixPointOne = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                       .backCenter, .sideLeft, .sideRight])
    public static let sixPointOneBack = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                           .backLeft, .backRight, .backCenter])
    public static let sevenPointOne = AudioChannelLayout([P.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                                         .backLeft, .backRight, .sideLeft, .sideRight])

    /// FFmpeg's named layouts (`av_channel_layout_standard`) up to eight channels, by FFmpeg's
    /// name, positions in FFmpeg's native order.
    public static let named: [(name: String, layout: AudioChannelLayout)] = [
        ("mono", mono), ("stereo", stereo), ("2.1", twoPointOne), ("3.0", surround),
        ("3.0(back)", AudioChannelLayout([.frontLeft, .frontRight, .backCenter])),
        ("4.0", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter])),
        ("quad", quad), ("quad(side)", quadSide),
        ("3.1", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency])),
        ("5.0", fivePointZeroBack), ("5.0(side)", fivePointZeroSide),
        ("4.1", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backCenter])),
        ("5.1", fivePointOneBack), ("5.1(side)", fivePointOneSide),
        ("6.0", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backCenter, .sideLeft, .sideRight])),
        ("6.0(front)", AudioChannelLayout([.frontLeft, .frontRight, .frontLeftOfCenter, .frontRightOfCenter,
                                           .sideLeft, .sideRight])),
        ("hexagonal", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight, .backCenter])),
        ("6.1", sixPointOne), ("6.1(back)", sixPointOneBack),
        ("6.1(front)", AudioChannelLayout([.frontLeft, .frontRight, .lowFrequency, .frontLeftOfCenter,
                                           .frontRightOfCenter, .sideLeft, .sideRight])),
        ("7.0", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight,
                                    .sideLeft, .sideRight])),
        ("7.0(front)", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .frontLeftOfCenter,
                                           .frontRightOfCenter, .sideLeft, .sideRight])),
        ("7.1", sevenPointOne),
        ("7.1(wide)", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft,
                                          .backRight, .frontLeftOfCenter, .frontRightOfCenter])),
        ("7.1(wide-side)", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .lowFrequency,
                                               .frontLeftOfCenter, .frontRightOfCenter, .sideLeft, .sideRight])),
        ("octagonal", AudioChannelLayout([.frontLeft, .frontRight, .frontCenter, .backLeft, .backRight,
                                          .backCenter, .sideLeft, .sideRight])),
        ("downmix", AudioChannelLayout([.stereoLeft, .stereoRight])),
    ]

    /// The WAVE_FORMAT_EXTENSIBLE `dwChannelMask` for this layout: one bit per position
    /// (SPEAKER_FRONT_LEFT = 0x1 … SPEAKER_TOP_BACK_RIGHT = 0x20000), nil when a position has no
    /// bit or the positions are not in the mask's order (WAV requires it).
    public var waveChannelMask: UInt32? {
        var mask: UInt32 = 0
        var last = -1
        for p in positions {
            guard let bit = Self.waveBits.firstIndex(of: p), bit > last else { return nil }
            mask |= 1 << UInt32(bit)
            last = bit
        }
        return mask
    }

    /// The WAVE speaker bits in order (FFmpeg's first 18 positions are the same).
    private static let waveBits: [AudioChannelPosition] = [
        .frontLeft, .frontRight, .frontCenter, .lowFrequency, .backLeft, .backRight,
        .frontLeftOfCenter, .frontRightOfCenter, .backCenter, .sideLeft, .sideRight, .topCenter,
        .topFrontLeft, .topFrontCenter, .topFrontRight, .topBackLeft, .topBackCenter, .topBackRight,
    ]
}
