// swift-tools-version: 6.2
// 6.2: the sources use `InlineArray` and integer generic parameters (SE-0452, SE-0453).
// Tonearm — Apple's media-playback system, in Swift, for Linux.
// SPDX-License-Identifier: GPL-3.0-or-later
import PackageDescription

let package = Package(
    name: "Tonearm",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tonearm", targets: ["Tonearm"]),
        // Apple's names (AVAudioPlayer, MPMusicPlayerController, CMTime, AudioServices…) over
        // Tonearm's types, for code ported from iOS: `import TonearmCompat` (issue 23).
        .library(name: "TonearmCompat", targets: ["TonearmCompat"]),
        .library(name: "TonearmCore", targets: ["TonearmCore"]),
        // The render contract, the output-driver registry, and the null and file drivers: no C.
        .library(name: "TonearmRender", targets: ["TonearmRender"]),
        .library(name: "TonearmPlaylists", targets: ["TonearmPlaylists"]),
        .library(name: "TonearmNowPlaying", targets: ["TonearmNowPlaying"]),
        .library(name: "TonearmMPRIS", targets: ["TonearmMPRIS"]),
        // The desktop integration (MPRIS on the session bus), apart from the playback API:
        // `import Tonearm` does not bring libdbus's MPRIS; programs that publish a player add this.
        .library(name: "TonearmDesktop", targets: ["TonearmDesktop"]),
        .library(name: "TonearmSession", targets: ["TonearmSession"]),
        .library(name: "TonearmLibrary", targets: ["TonearmLibrary"]),
        .library(name: "TonearmExport", targets: ["TonearmExport"]),
        // Recording (AVAudioRecorder): a PulseAudio record stream into a WAV or FLAC file.
        .library(name: "TonearmRecord", targets: ["TonearmRecord"]),
        .library(name: "TonearmVideo", targets: ["TonearmVideo"]),
        // The video window (SDL2): frames shown with a gravity, keys and mouse as events.
        .library(name: "TonearmWindow", targets: ["TonearmWindow"]),
        .library(name: "TonearmKit", targets: ["TonearmKit"]),
        .library(name: "TonearmMPDClient", targets: ["TonearmMPDClient"]),
        .executable(name: "tonearm", targets: ["TonearmCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The media library's database: SQLite (the system's libsqlite3) with migrations and FTS5.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        // The CLI's config file (~/.config/tonearm/config.toml): TOML through toml++.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The daemon's MPD server (issue 20): sockets and their event loop, and start-up, signals
        // and graceful shutdown. Only TonearmDaemon imports them.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // swift-log: the daemon's log (service-lifecycle's Logger), and the warnings a library user
        // should see without asking (a refused setCategory that ported code swallows), on stderr
        // unless the application bootstraps its own handler.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The daemon's web remote (issue 21): HTTP and WebSocket on the daemon's own process.
        // Only TonearmWeb imports them. Without Hummingbird's default trait ConfigurationSupport
        // (reading its settings through swift-configuration, which we do not use: 48 files fewer
        // to build).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Hummingbird's header types (HTTPField names), named by the web remote.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        // Layer 0: formats, PCM buffers, time, errors, lock-free rings. No C dependency.
        .target(name: "TonearmCore"),

        // Layer 1: system libraries, each with a small shim for the macros Swift cannot import.
        // FFmpeg's headers (on the default path), not linked: CFFmpegLazy defines the functions
        // Tonearm calls and loads the libraries on first use, so that a process that needs no
        // codec (a library scan of FLAC files, --help) starts without FFmpeg's ~130 libraries.
        .systemLibrary(
            name: "CFFmpeg",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev", "libswscale-dev"])]
        ),
        .target(name: "CFFmpegLazy"),
        // No pkgConfig: libpulse.pc adds `-D_REENTRANT -pthread`, which SwiftPM warns about;
        // the headers are on the default path. Not linked: CPulseLazy defines the pa_ functions
        // Tonearm calls and loads libpulse on the first one (a mainloop made for the output, the
        // sink list or a volume), so that a library scan, an export or --help starts without it
        // and the ~24 libraries behind it.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        .target(name: "CPulseLazy"),
        // Not linked either: CRubberBandLazy loads librubberband (and libfftw3, libsamplerate behind
        // it) when a TimeStretcher is first made — a rate or pitch other than 1, a time-pitch node.
        .systemLibrary(name: "CRubberBand", providers: [.apt(["librubberband-dev"])]),
        .target(name: "CRubberBandLazy"),
        // pkgConfig for the include paths (/usr/include/dbus-1.0 and the arch-specific one);
        // dbus-1.pc adds no flags that SwiftPM warns about.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // Not linked: COpenSSLLazy loads libssl (and libcrypto) on the first HTTPS connection or
        // AES-128 segment. No pkgConfig (openssl.pc's `-lssl -lcrypto` would link them): the
        // headers are on the default path.
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .target(name: "COpenSSLLazy"),
        // No pkgConfig: sdl2.pc adds `-D_REENTRANT`; the shim includes <SDL2/SDL.h> from the
        // default path. Not linked: CSDL2Lazy defines the SDL functions Tonearm calls and loads
        // libSDL2 when a window first opens, so that a process that shows no video (a scan, an
        // audio play) starts without SDL and the ~50 X11 and Wayland libraries behind it.
        .systemLibrary(name: "CSDL2", providers: [.apt(["libsdl2-dev"])]),
        .target(name: "CSDL2Lazy"),

        // The render contract between the engine and its outputs (AudioRenderSource, RenderTiming,
        // AudioOutputDriver), the registry of drivers by name that a program fills, and the
        // drivers that need no C library (null, file). The engine depends on this, not on a driver.
        .target(name: "TonearmRender", dependencies: ["TonearmCore"]),

        // Playlists (M3U / M3U8, PLS, XSPF) read and written: Foundation only, no C.
        .target(name: "TonearmPlaylists", dependencies: ["TonearmCore"]),

        // Layer 2: plugin families over the core.
        .target(name: "TonearmCodecs", dependencies: ["TonearmCore", "CFFmpeg", "CFFmpegLazy"]),
        // The PulseAudio driver (and the sink's port types), registered as `pulse` by the program.
        .target(name: "TonearmOutput", dependencies: ["TonearmCore", "TonearmRender", "TonearmDBus", "CPulse", "CPulseLazy"]),
        // DSP kernels as plain types (time-stretching now; EQ, mixer, effects to come).
        .target(name: "TonearmDSP", dependencies: ["TonearmCore", "CRubberBand", "CRubberBandLazy"]),
        // Now Playing and remote commands (MPNowPlayingInfoCenter, MPRemoteCommandCenter): pure Swift.
        .target(name: "TonearmNowPlaying", dependencies: ["TonearmCore"]),
        // Network sources: HTTP(S) with resumption, ICY metadata, HLS; no decoding here.
        .target(name: "TonearmNetwork", dependencies: ["TonearmCore", "COpenSSL", "COpenSSLLazy"]),
        // Both published as MPRIS2 on the session bus.
        // What the D-Bus clients share: finding the session bus, connecting, the serving loop.
        .target(name: "TonearmDBus", dependencies: ["TonearmCore", "CDBus"]),
        // The MPD protocol's text (requests, command lists, filters, arguments, ACKs): no I/O,
        // no dependency — the daemon's server (issue 20) and the fuzz target stand on it.
        .target(name: "TonearmMPDProtocol"),
        // A client of the MPD protocol (the daemon's, or MPD's): typed answers and errors, async
        // requests, idle as an async sequence; POSIX sockets on a queue of its own, no NIO.
        .target(name: "TonearmMPDClient", dependencies: ["TonearmMPDProtocol"]),
        // The database half of the MPD protocol over the library (lsinfo, find, list, count…):
        // answers as text, no I/O but the library's and stat/readdir of the music folder.
        .target(name: "TonearmMPDLibrary", dependencies: ["TonearmMPDProtocol", "TonearmLibrary", "TonearmCore"]),
        .target(name: "TonearmMPRIS", dependencies: ["TonearmNowPlaying", "TonearmDBus", "CDBus"]),
        // The desktop integration product: MPRIS (and Now Playing, which it publishes).
        .target(name: "TonearmDesktop", dependencies: ["TonearmMPRIS", "TonearmNowPlaying"]),
        // The sound server's outputs and system volume (AudioRoutes, SystemVolume): a PulseAudio
        // control connection with subscription events. AudioSession: categories, and interruptions
        // and ducking between Tonearm sessions over the D-Bus session bus.
        .target(name: "TonearmSession", dependencies: ["TonearmCore", "TonearmRender", "TonearmOutput", "TonearmDBus", "CPulse", "CPulseLazy", "CDBus",
                                                .product(name: "Logging", package: "swift-log")]),

        // Export (AVAsset, AVAssetExportSession, AVMutableComposition): track listing, remuxing
        // without re-encoding, conversion and trimming, written through FFmpeg's muxers.
        .target(name: "TonearmExport", dependencies: ["TonearmCore", "TonearmCodecs", "CFFmpeg", "CFFmpegLazy"]),

        // Recording (AVAudioRecorder): a PulseAudio record stream (its own file, as each output
        // driver is) whose read callback fills a lock-free ring, and a writer thread that meters
        // and encodes it into WAV or FLAC through TonearmExport's encoders.
        .target(name: "TonearmRecord", dependencies: ["TonearmCore", "TonearmOutput", "TonearmExport", "TonearmSession", "CPulse", "CPulseLazy"]),

        // Video (AVAssetImageGenerator, the decoding side of AVPlayerItemVideoOutput): video track
        // descriptions, a video decoder to VideoFrames (libswscale where a conversion is needed),
        // thumbnails and PNG, YUV4MPEG2 output, and the pipeline that shows frames against a
        // master clock (VideoSyncMachine, VideoPipeline). Headless: no window system, no sound
        // server, no D-Bus.
        .target(name: "TonearmVideo", dependencies: ["TonearmCore", "TonearmCodecs", "CFFmpeg", "CFFmpegLazy"]),

        // The video window (PlayerLayer's drawing): SDL2 on a thread of its own; the frames are
        // TonearmCore's VideoFrame, so it knows no decoder and no player.
        .target(name: "TonearmWindow", dependencies: ["TonearmCore", "CSDL2", "CSDL2Lazy"]),
        // The player's ready views (AVKit's AVPlayerViewController and AVPlayerLayer): a player's
        // video in a window with built-in controls. Joins the playback API to the window; no
        // audio module depends on it (the seam keeps SDL out of the audio path). Its
        // NowPlayingSession joins a video player to the audio session, the remote commands and
        // Now Playing (taken while the video plays, given back when it ends or closes).
        .target(name: "TonearmKit", dependencies: ["TonearmPlayback", "TonearmVideo", "TonearmWindow", "TonearmCore",
                                                   "TonearmNowPlaying", "TonearmSession"]),

        // Layer 3: the engine — the one render path (decoder threads → lock-free rings → node graph →
        // output) that every player shares. It knows only the render contract: no driver, no libpulse.
        .target(name: "TonearmEngine", dependencies: ["TonearmCore", "TonearmCodecs", "TonearmDSP", "TonearmRender"]),
        // The media library (MPMediaLibrary, MPMediaQuery, MPMediaItem): a scanner reading tags
        // through TonearmCodecs into one SQLite file through GRDB.
        .target(name: "TonearmLibrary", dependencies: ["TonearmCore", "TonearmCodecs", "TonearmPlaylists", .product(name: "GRDB", package: "GRDB.swift"),
                                                // SQLite's C API, to bind a scan's rows without boxing each value
                                                .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // Layer 4: players built on the engine's render path.
        .target(name: "TonearmPlayback", dependencies: ["TonearmCore", "TonearmCodecs", "TonearmDSP", "TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmPlaylists", "TonearmSession", "TonearmNetwork", "TonearmVideo"]),

        // Umbrella: `import Tonearm` gives the whole playback API (not MPRIS: see TonearmDesktop).
        // AVKit's names (AVPlayerViewController, AVPlayerLayer) are the kit's views: SDL stays lazily
        // loaded (CSDL2Lazy), so an audio-only program importing the layer loads no libSDL2.
        .target(name: "TonearmCompat", dependencies: ["Tonearm", "TonearmDesktop", "TonearmKit", "TonearmWindow", .product(name: "Logging", package: "swift-log")]),
        // The seed posts' media code, ported from iOS with Apple's names (issue 23): run by
        // SeedPortsTests against the tests' sound servers.
        .target(name: "SeedPorts", dependencies: ["TonearmCompat"], path: "Examples/SeedPorts"),
        .target(name: "Tonearm", dependencies: ["TonearmCore", "TonearmCodecs", "TonearmDSP", "TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmPlayback",
                                                "TonearmPlaylists", "TonearmNowPlaying", "TonearmSession", "TonearmNetwork",
                                                "TonearmLibrary", "TonearmExport", "TonearmRecord", "TonearmVideo", "TonearmMPDClient"]),

        // The config file's syntax: TOML through TOMLKit, the line of each key, typed values and
        // problems named by line and key (no ArgumentParser, no playback): what the command's
        // `ConfigFile` gives meaning to, and what scripts/fuzz builds with the fuzzer.
        .target(name: "TonearmConfig", dependencies: [.product(name: "TOMLKit", package: "TOMLKit")]),

        // The daemon (issue 20): one queue driven over the MPD protocol by any MPD client, on a
        // Unix socket and TCP through SwiftNIO; start-up and shutdown through service-lifecycle.
        // The only module that imports NIO.
        // Swift concurrency's global executor hooks, set from C (the static runtime exports no
        // dynamic symbols): the daemon runs its tasks on its own event loops, not libdispatch's pool.
        .target(name: "CExecutorHook"),
        .target(name: "TonearmDaemon", dependencies: ["CExecutorHook", "TonearmMPDProtocol", "TonearmPlayback", "TonearmSession", "TonearmCodecs", "TonearmCore", "TonearmRender", "TonearmExport", "TonearmDSP",
                                                      .product(name: "NIOCore", package: "swift-nio"),
                                                      .product(name: "NIOPosix", package: "swift-nio"),
                                                      .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                      .product(name: "Logging", package: "swift-log")]),

        // The web remote (issue 21): a page and a JSON/WebSocket API served by Hummingbird, driving
        // the daemon's one command layer (MPD command batches through MPDDaemon) and pushing the
        // state to every page on each idle event.
        .target(name: "TonearmWeb", dependencies: ["TonearmDaemon", "TonearmMPDProtocol", "TonearmMPDLibrary", "TonearmLibrary", "TonearmCore", "TonearmSession",
                                                   .product(name: "Hummingbird", package: "hummingbird"),
                                                   .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                                                   .product(name: "HTTPTypes", package: "swift-http-types"),
                                                   .product(name: "Logging", package: "swift-log")]),

        // The command-line player, last.
        .executableTarget(
            name: "TonearmCLI",
            dependencies: ["Tonearm", "TonearmDesktop", "TonearmKit", "TonearmWindow", "TonearmConfig", "TonearmDaemon", "TonearmWeb", "TonearmMPDLibrary", "TonearmMPDClient", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "TOMLKit", package: "TOMLKit")],
            // The release binary (static Swift runtime; scripts/demo, install-extras, bench) is
            // linked by the toolchain's lld with packed relative relocations (a 23 KB table
            // instead of gold's 2.7 MB, read at every start; glibc ≥ 2.36, as Debian 12 has) and
            // without the static runtime's -export-dynamic (a 2.3 MB symbol table, probed by every
            // symbol lookup of the ~90 libraries FFmpeg loads; nothing dlopens Swift code into
            // this process). Measured in BENCHMARKS.md ("Linking the release binary"): −3.3 MB
            // peak memory in a library scan, −5 ms for a start that loads FFmpeg.
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                                           "-Xlinker", "--no-export-dynamic"],
                                          .when(platforms: [.linux], configuration: .release))]
        ),

        .testTarget(name: "TonearmCoreTests", dependencies: ["TonearmCore"]),
        .testTarget(name: "TonearmCodecsTests", dependencies: ["TonearmCodecs", "TonearmTestSupport"]),
        .testTarget(name: "TonearmOutputTests", dependencies: ["TonearmOutput", "TonearmRender", "TonearmDBus", "TonearmTestSupport"]),
        .testTarget(name: "TonearmEngineTests", dependencies: ["TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmTestSupport"]),
        .testTarget(name: "TonearmPlaybackTests", dependencies: ["TonearmPlayback", "TonearmEngine", "TonearmPlaylists", "TonearmSession", "TonearmVideo", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCLITests", dependencies: ["TonearmTestSupport", "TonearmCore", "Tonearm", "TonearmMPDClient", "TonearmWindow"]),
        // The command's pure parts (key decoding, text width, the picker's screen), offline.
        .testTarget(name: "TonearmCLIUnitTests", dependencies: ["TonearmCLI", "TonearmConfig", "Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmTests", dependencies: ["Tonearm", "TonearmTestSupport"]),
        .testTarget(name: "TonearmCompatTests", dependencies: ["TonearmCompat", "TonearmTestSupport"]),
        .testTarget(name: "SeedPortsTests", dependencies: ["SeedPorts", "TonearmCompat", "TonearmTestSupport"]),
        .testTarget(name: "TonearmLibraryTests", dependencies: ["TonearmLibrary", "TonearmCodecs", "TonearmPlaylists", "TonearmTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "TonearmExportTests", dependencies: ["TonearmExport", "TonearmCodecs", "TonearmTestSupport"]),
        .testTarget(name: "TonearmRecordTests", dependencies: ["TonearmRecord", "TonearmEngine", "TonearmRender", "TonearmOutput", "TonearmSession", "TonearmTestSupport"]),
        .testTarget(name: "TonearmVideoTests", dependencies: ["TonearmVideo", "TonearmCore", "TonearmCodecs", "TonearmTestSupport"]),
        .testTarget(name: "TonearmDSPTests", dependencies: ["TonearmDSP", "TonearmCore"]),
        .testTarget(name: "TonearmPlaylistsTests", dependencies: ["TonearmPlaylists", "TonearmNetwork", "TonearmTestSupport"]),
        .testTarget(name: "TonearmNowPlayingTests", dependencies: ["TonearmNowPlaying"]),
        .testTarget(name: "TonearmDaemonTests", dependencies: ["TonearmDaemon", "TonearmDSP", "TonearmExport", "TonearmMPDProtocol", "TonearmPlayback", "TonearmRender", "TonearmTestSupport"]),
        .testTarget(name: "TonearmWebTests", dependencies: ["TonearmWeb", "TonearmDaemon", "TonearmMPDProtocol", "TonearmMPDLibrary", "TonearmLibrary", "TonearmCore", "TonearmPlayback", "TonearmRender", "TonearmTestSupport",
                                                       .product(name: "Hummingbird", package: "hummingbird"),
                                                       .product(name: "HTTPTypes", package: "swift-http-types"),
                                                       .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "TonearmMPDProtocolTests", dependencies: ["TonearmMPDProtocol", "TonearmTestSupport"]),
        .testTarget(name: "TonearmMPDLibraryTests", dependencies: ["TonearmMPDLibrary", "TonearmMPDProtocol", "TonearmLibrary", "TonearmTestSupport"]),
        .testTarget(name: "TonearmNetworkTests", dependencies: ["TonearmNetwork", "TonearmTestSupport"]),
        .testTarget(name: "TonearmSessionTests", dependencies: ["TonearmSession", "TonearmOutput", "TonearmTestSupport", "CDBus",
                                                             .product(name: "Logging", package: "swift-log")]),
        // The window's geometry alone, and real windows on a private Xvfb display (screenshots).
        .testTarget(name: "TonearmWindowTests", dependencies: ["TonearmWindow", "TonearmCore", "TonearmTestSupport"]),
        .testTarget(name: "TonearmKitTests", dependencies: ["TonearmKit", "TonearmWindow", "TonearmPlayback", "TonearmRender", "TonearmCore", "TonearmTestSupport",
                                                           "TonearmNowPlaying", "TonearmSession", "TonearmMPRIS"]),
        .testTarget(name: "TonearmMPRISTests", dependencies: ["TonearmMPRIS", "TonearmNowPlaying", "TonearmTestSupport"]),
        // The seams: reads this manifest (`swift package dump-package`) and checks what may not
        // depend on what (the engine on libpulse or libdbus, the umbrella on MPRIS).
        .testTarget(name: "TonearmArchitectureTests"),
        // Shared by the tests: fixture generation, the private PulseAudio server, recording, Xvfb
        // displays (screenshots; xclient.py sends windows close requests, keys and motion), the
        // test HTTP server (httpd.py, run with python3 from its source path), and the A/V sync
        // instruments (xsampler.py reads a pixel of the screen, pamonitor.py records a sink's
        // monitor with PulseAudio's timing).
        .target(name: "TonearmTestSupport", dependencies: ["TonearmCore", "TonearmEngine", "TonearmOutput", "TonearmDBus", "CDBus", "RenderThreadProbe"],
                path: "Tests/TonearmTestSupport", exclude: ["httpd.py", "xclient.py", "xsampler.py", "pamonitor.py", "webremote.py", "webbuffered.py", "browsersteps.py"]),
        // The test executable's malloc, free and pthread lock calls, counted on the render thread
        // (RenderProbe in TonearmTestSupport): proof that the render path allocates and locks nothing.
        .target(name: "RenderThreadProbe", path: "Tests/RenderThreadProbe"),
    ],
    swiftLanguageModes: [.v6]
)
