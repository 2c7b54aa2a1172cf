// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Testing
import Tonearm
@testable import TonearmCLI

/// The play screen as a pure function of its state and the terminal's size (issue 16): the
/// now-playing block always in view, the queue in what is left, nothing wider than the
/// terminal, CJK text measured in columns.
@Suite struct LiveScreenRenderTests {
    /// The text of a line as the terminal shows it (escape sequences out).
    static func visible(_ line: String) -> String {
        line.replacing(/\x{1B}\[[0-9;?]*[A-Za-z]/, with: "")
    }

    static func state(queue count: Int = 100, current: Int = 50, cjk: Bool = false) -> ScreenState {
        var s = ScreenState()
        s.status = .playing
        s.title = cjk ? "晴天 — 一个很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长的标题" : "First Song"
        s.artist = cjk ? "周杰伦 · 一个很长很长很长很长很长很长很长很长很长很长的乐队名字" : "The Testers"
        s.album = cjk ? "叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美叶惠美" : "Album"
        s.format = "FLAC, 44.1 kHz, 16-bit, stereo, 1411 kb/s"
        s.elapsed = 10
        s.duration = 180
        s.output = "pulse:alsa_output.pci-0000_00_1f.3.analog-stereo"
        s.eq = "bass-boost"
        s.shuffleMode = .songs
        s.queue = (0..<count).map { i in
            cjk ? .init(title: "晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天晴天 \(i)", artist: "周杰伦周杰伦周杰伦周杰伦周杰伦")
                : .init(title: "Track \(i)", artist: "Band")
        }
        s.current = count == 0 ? nil : current
        return s
    }

    static func lines(_ s: ScreenState, _ w: Int, _ h: Int) -> [String] {
        LiveScreen.render(s, width: w, height: h).components(separatedBy: "\n")
    }

    @Test func theNowPlayingBlockStaysInViewAt80x24AndTheQueueTakesTheRest() {
        let lines = Self.lines(Self.state(), 80, 24).map(Self.visible)
        #expect(lines.count == 24)
        #expect(lines.contains { $0.hasPrefix(" Title   First Song") })
        #expect(lines.contains { $0.contains("0:10 / 3:00") })
        #expect(lines.contains { $0.hasPrefix(" Volume  [") })
        #expect(lines.contains { $0.contains("Repeat: off") })
        #expect(lines.contains { $0.contains("▶ 51. Track 50 — Band") })
        #expect(lines.contains { $0.contains("more") && $0.contains("…") })
        #expect(lines.last?.contains("quit") == true, "the keys line is the last row")
        let shown = lines.filter { $0.contains(". Track ") }.count
        #expect(shown > 3 && shown < 24)
    }

    @Test func theQueueGrowsOnATallTerminal() {
        let small = Self.lines(Self.state(), 80, 24).filter { $0.contains(". Track ") }.count
        let tall = Self.lines(Self.state(), 120, 40).filter { $0.contains(". Track ") }.count
        #expect(Self.lines(Self.state(), 120, 40).count == 40)
        #expect(tall == small + 16)
        // A short queue is listed whole, without "more".
        let few = Self.lines(Self.state(queue: 5, current: 0), 120, 40)
        #expect(few.filter { $0.contains(". Track ") }.count == 5)
        #expect(!few.contains { $0.contains("more") })
    }

    @Test func aVeryShortTerminalKeepsTheNowPlayingLines() {
        for h in 8...14 {
            let lines = Self.lines(Self.state(), 80, h).map(Self.visible)
            #expect(lines.count == h)
            #expect(lines.contains { $0.hasPrefix(" Title") }, "height \(h)")
            #expect(lines.contains { $0.contains("0:10 / 3:00") }, "height \(h)")
            #expect(lines.contains { $0.hasPrefix(" Volume") }, "height \(h)")
        }
    }

    @Test func nothingIsWiderThanTheTerminalAtAnyWidthDownTo40() {
        var s = Self.state(cjk: true)
        s.notice = "no sound server answered: playing to the null output (nothing will be heard) 没有声音"
        s.message = "一个很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长很长的消息 failed: cannot open"
        s.systemVolume = SystemVolumeState(volume: 0.7, isMuted: true, outputName: "alsa_output.pci-0000_00_1f.3.analog-stereo")
        s.queue[51].failure = "cannot open 晴天: invalid data found when processing input"
        s.cursor = 49
        for showsHelp in [false, true] {
            s.showsHelp = showsHelp
            for w in 40...130 {
                for h in [10, 24, 40] {
                    let lines = Self.lines(s, w, h)
                    #expect(lines.count == h)
                    for line in lines {
                        #expect(TextWidth.of(Self.visible(line)) < w, "\(w)×\(h): \(Self.visible(line))")
                    }
                }
            }
        }
    }

    @Test func theStatusLineFitsEightyColumnsAndFiftyLookSane() {
        let at80 = Self.lines(Self.state(), 80, 24).map(Self.visible)
        #expect(at80.contains { $0.contains("Repeat: off   Shuffle: on   EQ: bass-boost   Speed: 1.0×") })
        // At 50 the modes go on two lines, each whole; the bars shrink instead of being cut.
        let at50 = Self.lines(Self.state(), 50, 24).map(Self.visible)
        for mode in ["Repeat: off", "Shuffle: on", "EQ: bass-boost", "Speed: 1.0×"] {
            #expect(at50.contains { $0.contains(mode) }, "\(mode)")
        }
        #expect(at50.filter { $0.contains("Repeat: off") || $0.contains("Speed: 1.0×") }.count == 2, "on two lines")
        #expect(at50.contains { $0.hasPrefix(" Volume  [") && $0.hasSuffix("] 100%") })
        #expect(at50.contains { $0.contains("] 0:10 / 3:00") })
    }

    @Test func cjkTitlesAreCutByColumnsNotCharacters() {
        let lines = Self.lines(Self.state(cjk: true), 80, 24).map(Self.visible)
        let title = try! #require(lines.first { $0.hasPrefix(" Title") })
        #expect(title.hasSuffix("…"))
        #expect(TextWidth.of(title) <= 79 && TextWidth.of(title) >= 77)
    }

    @Test func aFailedItemShowsWhy() {
        var s = Self.state(queue: 3, current: 0)
        s.queue[1].failure = "cannot open: invalid data"
        let lines = Self.lines(s, 100, 30).map(Self.visible)
        #expect(lines.contains { $0.contains("✗ 2. Track 1 — Band  (cannot open: invalid data)") })
    }

    @Test func theCurrentItemIsMarkedInColourUnlessNoColor() {
        var s = Self.state(queue: 3, current: 1)
        let coloured = Self.lines(s, 100, 30).first { $0.contains("▶ 2. Track 1") }
        #expect(coloured?.hasPrefix("\u{1B}[1;36m") == true)
        s.color = false
        let plain = Self.lines(s, 100, 30)
        #expect(plain.first { $0.contains("▶ 2. Track 1") }?.hasPrefix("\u{1B}[1m") == true, "bold, without colour")
        #expect(!plain.joined().contains(/\x{1B}\[[0-9;]*3[0-9]m/))
        #expect(ScreenState.colorAllowed(environment: ["NO_COLOR": "1"]) == false)
        #expect(ScreenState.colorAllowed(environment: ["NO_COLOR": ""]) == true)
        #expect(ScreenState.colorAllowed(environment: [:]) == true)
    }

    @Test func theCursorRowIsInReverseVideoAndTheKeysLineChanges() {
        var s = Self.state(queue: 10, current: 0)
        s.cursor = 4
        let lines = Self.lines(s, 100, 30)
        #expect(lines.first { $0.contains("5. Track 4") }?.hasPrefix("\u{1B}[7m") == true)
        #expect(lines.contains { Self.visible($0).contains("Queue (10) — browsing") })
        #expect(Self.visible(lines.last ?? "").contains("reorder"))
    }

    @Test func theQueueWindowFollowsTheFocus() {
        #expect(LiveScreen.window(count: 100, focus: 0, rows: 10) == (0, 9))
        #expect(LiveScreen.window(count: 100, focus: 99, rows: 10) == (91, 100))
        let (a, b) = LiveScreen.window(count: 100, focus: 50, rows: 10)
        #expect(b - a == 8 && (a...b).contains(50))
        for count in 1...30 {
            for rows in 1...12 {
                for focus in 0..<count {
                    let (start, end) = LiveScreen.window(count: count, focus: focus, rows: rows)
                    let indicators = (start > 0 ? 1 : 0) + (end < count ? 1 : 0)
                    #expect(start <= focus && focus < end, "\(count) \(rows) \(focus)")
                    #expect(end - start + indicators <= rows || rows < 3 && end - start <= rows, "\(count) \(rows) \(focus)")
                }
            }
        }
    }

    @Test func repeatIsNamedAsTheOptionNamesIt() {
        var s = Self.state(queue: 0)
        s.repeatMode = .none
        #expect(LiveScreen.render(s, width: 80, height: 24).contains("Repeat: off"))
        s.repeatMode = .all
        #expect(LiveScreen.render(s, width: 80, height: 24).contains("Repeat: all"))
    }

    @Test func theKeyHelpIsDrawnOverTheScreen() {
        var s = Self.state()
        s.showsHelp = true
        s.muted = true
        let lines = Self.lines(s, 80, 24).map(Self.visible)
        #expect(lines.count == 24)
        #expect(lines.contains { $0.contains("Keys — any key closes this") })
        #expect(lines.contains { $0.contains("m") && $0.contains("mute / unmute") })
        #expect(lines.contains { $0.contains("Home") && $0.contains("restart the track") })
        #expect(lines.contains { $0.contains("queue: move item down") })
        // On a tall terminal the box leaves the top of the screen in view.
        let big = Self.lines(s, 120, 40).map(Self.visible)
        #expect(big.contains { $0.contains("Keys — any key closes this") })
        #expect(big.contains { $0.hasPrefix(" Title   First Song") })
    }
}

@Suite struct KeyBindingsTests {
    @Test func theDefaultsKeepTheOldKeysAndAddTheCommonOnes() {
        let k = KeyBindings.defaults
        for (key, action) in [("space", KeyAction.pause), ("left", .seekBack), ("up", .volumeUp), ("n", .next), ("p", .previous),
                              ("r", .repeat), ("s", .shuffle), ("e", .eqNext), ("[", .slower), ("]", .faster), ("q", .quit),
                              ("?", .help), ("m", .mute), ("9", .volumeDown), ("0", .volumeUp), ("-", .volumeDown), ("+", .volumeUp),
                              ("<", .previous), (">", .next), ("home", .restart), ("tab", .focusQueue), ("a", .add)] {
            #expect(k.action(for: key, queueFocused: false) == action, "\(key)")
        }
        // In the queue, ↑/↓ move the cursor; elsewhere they are the volume.
        #expect(k.action(for: "up", queueFocused: true) == .queueUp)
        #expect(k.action(for: "j", queueFocused: true) == .queueDown)
        #expect(k.action(for: "j", queueFocused: false) == nil)
        #expect(k.action(for: "d", queueFocused: true) == .queueRemove)
        #expect(k.action(for: "delete", queueFocused: true) == .queueRemove)
        #expect(k.action(for: "K", queueFocused: true) == .queueMoveUp)
        #expect(k.action(for: "shift-down", queueFocused: true) == .queueMoveDown)
        #expect(k.action(for: "enter", queueFocused: true) == .queuePlay)
        #expect(k.action(for: "q", queueFocused: true) == .quit)
    }

    @Test func overridesReplaceAnActionsKeys() throws {
        let k = try KeyBindings(overrides: ["pause": ["p", "Space"], "previous": ["b"], "quit": ["ctrl+q", "esc"], "queue-down": ["ctrl-n"]])
        #expect(k.action(for: "p", queueFocused: false) == .pause)
        #expect(k.action(for: "space", queueFocused: false) == .pause)
        #expect(k.action(for: "b", queueFocused: false) == .previous)
        #expect(k.action(for: "<", queueFocused: false) == nil, "previous has only the keys given")
        #expect(k.action(for: "ctrl-q", queueFocused: false) == .quit)
        #expect(k.action(for: "escape", queueFocused: false) == .quit)
        #expect(k.action(for: "q", queueFocused: false) == nil)
        #expect(k.action(for: "ctrl-n", queueFocused: true) == .queueDown)
        #expect(k.action(for: "j", queueFocused: true) == nil)
        #expect(k.keys(for: .pause) == ["space", "p"])
        #expect(try KeyBindings(overrides: ["mute": []]).keys(for: .mute).isEmpty)
    }

    @Test func unknownActionsAndKeysAreTypedErrorsNamingThem() {
        #expect(throws: KeyBindingError.unknownAction("louder")) { try KeyBindings(overrides: ["louder": ["u"]]) }
        #expect(throws: KeyBindingError.unknownKey("hyper-x", action: "mute")) { try KeyBindings(overrides: ["mute": ["hyper-x"]]) }
        #expect(throws: KeyBindingError.unknownKey("qq", action: "quit")) { try KeyBindings(overrides: ["quit": ["qq"]]) }
        #expect("\(KeyBindingError.unknownAction("louder"))".contains("'louder'"))
        #expect(KeyAction(rawValue: "seek-back") == .seekBack && KeyAction(rawValue: "eq-next") == .eqNext)
    }
}

@Suite struct PlayKeyDecoderTests {
    func decode(_ bytes: [UInt8]) -> [String] {
        var d = PlayKeyDecoder()
        return d.feed(bytes)
    }

    @Test func namesTheKeysTheBindingsUse() {
        #expect(decode(Array("q?J 9".utf8)) == ["q", "?", "J", "space", "9"])
        #expect(decode([0x1B, 0x5B, 0x41, 0x1B, 0x4F, 0x42]) == ["up", "down"])
        #expect(decode(Array("\u{1B}[1;2A\u{1B}[1;5C\u{1B}[H\u{1B}[1~\u{1B}[3~\u{1B}[5~\u{1B}[Z".utf8))
                == ["shift-up", "ctrl-right", "home", "home", "delete", "page-up", "shift-tab"])
        #expect(decode([0x0D, 0x09, 0x7F, 0x03, 0x0C]) == ["enter", "tab", "backspace", "ctrl-c", "ctrl-l"])
        #expect(decode(Array("é".utf8)) == ["é"])
        // In pieces, as a terminal may send them.
        var d = PlayKeyDecoder()
        #expect(d.feed([0x1B]).isEmpty)
        #expect(d.isWaitingAfterEscape)
        #expect(d.feed([0x5B]).isEmpty)
        #expect(d.feed([0x44]) == ["left"])
        #expect(d.feed([0x1B]).isEmpty)
        #expect(d.flushEscape() == ["escape"])
        // Every name decoded is one the bindings accept.
        for name in decode(Array("\u{1B}[1;2A\u{1B}[3~\u{1B}[H q".utf8)) { #expect(KeyBindings.canonicalName(name) == name) }
    }
}
