// SPDX-License-Identifier: GPL-3.0-or-later
import TonearmCore

/// The gapless/crossfade scheduler of a ``QueuePlayer``: what is scheduled on the queue's player
/// node, segment by segment, and what follows each segment once the node has read it. Pure
/// bookkeeping and decisions on what is known of the files (``ItemFacts``): it opens nothing,
/// owns no node and no thread, so every rule (which completions are stale, when a crossfade
/// applies and how long it is, where the position is, which item becomes current when a segment
/// has played) is tested on its own. The queue player opens the files off its lock and carries
/// the plan out on the node.
struct QueueSchedule: Sendable, Equatable {
    /// What the scheduler needs to know of an opened item.
    struct ItemFacts: Sendable, Equatable {
        /// Frames at the processing rate.
        var length: AudioFramePosition
        /// The processing rate (frames of `length` per second).
        var rate: Double
        /// The source's own rate (what a segment's frames count in).
        var sourceRate: Double
        var album: String?
        /// The album artist, or the artist when there is none.
        var albumArtist: String?
        var replayGain: ReplayGain

        init(length: AudioFramePosition, rate: Double, sourceRate: Double? = nil, album: String? = nil,
             albumArtist: String? = nil, replayGain: ReplayGain = ReplayGain()) {
            self.length = length
            self.rate = rate
            self.sourceRate = sourceRate ?? rate
            self.album = album
            self.albumArtist = albumArtist
            self.replayGain = replayGain
        }
    }

    /// Something scheduled on the node: which entry, what part of it, and the play order as it
    /// will be once that entry is current.
    struct Segment: Sendable, Equatable {
        var key: UInt64
        var token: UInt64
        var startFrame: AudioFramePosition
        var frames: AudioFramePosition
        var sourceRate: Double
        var order: PlayOrder
        /// What to schedule once this segment has been read.
        var then: Continuation
    }

    /// An entry at its place: which entry, its index in the queue, and the play order as it will
    /// be once that entry is current. What a crossfade goes into, and what the rest of a
    /// crossfaded item is, both name one.
    struct Place: Sendable, Equatable {
        var key: UInt64
        var index: Int
        var order: PlayOrder
    }

    /// What follows a scheduled segment.
    enum Continuation: Sendable, Equatable {
        /// The next item in play order, from its start.
        case next
        /// The crossfade into `partner`: the overlap, then the partner from `frames` on.
        case crossfade(Partner)
        /// The rest of the entry at `place` from `frame`, after its crossfade overlap.
        case rest(Place, frame: AudioFramePosition)
        /// The rest of the same entry, where a restart that kept what the output holds cut this
        /// segment (``keepRendered(upTo:restartingAt:engineRate:)``): it is scheduled already.
        case restarted

        /// Whether the next segment is more of the same entry (not the next item).
        var continuesItem: Bool {
            switch self {
            case .rest, .restarted: true
            case .next, .crossfade: false
            }
        }
    }

    /// The item a crossfade goes into, decided when the outgoing item is scheduled.
    struct Partner: Sendable, Equatable {
        var place: Place
        var outgoingPath: String
        var outGain: Float
        /// The overlap, in the outgoing item's frames.
        var frames: AudioFramePosition
    }

    /// What a crossfade out of the item being placed may go into: the next entry in play order
    /// (``QueueStateMachine/crossfadeCandidate(after:key:order:)``), opened.
    struct Incoming: Sendable, Equatable {
        var place: Place
        var facts: ItemFacts
    }

    /// The queue's settings that decide how an item is placed.
    struct Settings: Sendable, Equatable {
        /// Seconds of crossfade (0: gapless).
        var crossfade: Double = 0
        var replayGain: ReplayGainMode = .off
        var preamp: Double = 0
    }

    /// A segment to put on the node now: frames `start..<end` of the item at `gain`, its
    /// handlers reporting `token` of `epoch`.
    struct Placement: Sendable, Equatable {
        var token: UInt64
        var epoch: UInt64
        var start: AudioFramePosition
        var end: AudioFramePosition
        var gain: Float
        var frameCount: AudioFrameCount { AudioFrameCount(max(0, end - start)) }
    }

    /// What became of the schedule when a segment had been rendered to its last frame.
    enum Rendered: Sendable, Equatable {
        /// A stale completion (from before a restart or stop): nothing changes.
        case ignored
        /// The crossfade's overlap ended and the rest of the same item plays: one item.
        case sameItem(order: PlayOrder, current: UInt64? = nil)
        /// Entry `ended` ended and the next segment's item is now current, with `order`.
        case advanced(ended: UInt64, order: PlayOrder, current: UInt64? = nil)
        /// Entry `ended` ended and nothing follows: the queue is at its end, at `position` seconds.
        case finished(ended: UInt64, position: Double)
    }

    /// Bumped on every restart and stop: a completion of an older epoch is stale.
    private(set) var epoch: UInt64 = 0
    private(set) var nextToken: UInt64 = 1
    private(set) var segments: [Segment] = []
    /// Player-node frame at which the current segment's first frame played.
    private(set) var headStartPlayerFrame: Int64 = 0
    /// How many of the first `segments` the node has rendered to their last frame while their end
    /// is not heard yet (the output still holds it): each end is a join waiting to be heard
    /// (``joinFrame(engineRate:)``). The head stays the current segment until its end is heard.
    private(set) var renderedUnheard = 0

    /// Forgets everything scheduled (stop, restart): completions still to come are stale.
    mutating func clear() {
        segments.removeAll()
        renderedUnheard = 0
        epoch += 1
    }

    /// A new schedule whose head starts playing at player-node frame `playerFrame`.
    mutating func beginHead(playerFrame: Int64) {
        clear()
        headStartPlayerFrame = playerFrame
    }

    /// The first frame (at the processing rate) for playing from `seconds`, within the item.
    static func startFrame(seconds: Double, facts: ItemFacts) -> AudioFramePosition {
        min(facts.length, max(0, AudioFramePosition((seconds * facts.rate).rounded())))
    }

    /// How many of the outgoing item's frames a crossfade from `outgoing` into `incoming` lasts,
    /// or nil when they stay gapless: no crossfade set, or the next track of the same album
    /// played in order (`consecutive`), or an item too short. Items of different rates or
    /// channel counts are crossfaded too (the overlap converts the incoming item): the overlap
    /// is at most half of each item.
    static func crossfadeFrames(seconds: Double, outgoing: ItemFacts, incoming: ItemFacts,
                                consecutive: Bool) -> AudioFramePosition? {
        guard seconds > 0 else { return nil }
        if consecutive, let album = outgoing.album, album == incoming.album, outgoing.albumArtist == incoming.albumArtist {
            return nil
        }
        let incomingHalf = AudioFramePosition(Double(incoming.length / 2) * outgoing.rate / incoming.rate)
        let frames = min(AudioFramePosition(seconds * outgoing.rate), outgoing.length / 2, incomingHalf)
        return frames > 0 ? frames : nil
    }

    /// Where a segment of an item ends and what follows it, played from `start`: to its end, or —
    /// with a crossfade `partner` — to where the overlap begins (when `start` is before it).
    static func plan(length: AudioFramePosition, start: AudioFramePosition,
                     partner: Partner?) -> (end: AudioFramePosition, then: Continuation) {
        if let p = partner, start < length - p.frames { return (length - p.frames, .crossfade(p)) }
        return (length, .next)
    }

    // MARK: Placing items

    /// Places the head of a new schedule: entry `place` (opened: `facts`, at `path`) from
    /// `seconds` into it (clamped to the item), its first frame playing at player-node frame
    /// `playerFrame`. Every completion of what was scheduled before is stale from now on.
    mutating func placeHead(_ place: Place, facts: ItemFacts, path: String, at seconds: Double, playerFrame: Int64,
                            incoming: Incoming?, settings: Settings) -> Placement {
        beginHead(playerFrame: playerFrame)
        return self.place(place, facts: facts, path: path, from: Self.startFrame(seconds: seconds, facts: facts),
                          incoming: incoming, settings: settings)
    }

    /// Places entry `place` (opened: `facts`, at `path`) from frame `start` behind what is
    /// scheduled, at its ReplayGain: to its end, the next item following it gapless — or, when
    /// a crossfade into `incoming` applies (``crossfadeFrames(seconds:outgoing:incoming:consecutive:)``),
    /// to where the overlap begins.
    mutating func place(_ place: Place, facts: ItemFacts, path: String, from start: AudioFramePosition,
                        incoming: Incoming?, settings: Settings) -> Placement {
        let gain = settings.replayGain.linearGain(for: facts.replayGain, preamp: settings.preamp)
        var partner: Partner?
        if let incoming,
           let frames = Self.crossfadeFrames(seconds: settings.crossfade, outgoing: facts, incoming: incoming.facts,
                                             consecutive: incoming.place.index == place.index + 1) {
            partner = Partner(place: incoming.place, outgoingPath: path, outGain: gain, frames: frames)
        }
        let (end, then) = Self.plan(length: facts.length, start: start, partner: partner)
        let (token, epoch) = append(key: place.key, start: start, end: end, sourceRate: facts.sourceRate,
                                    order: place.order, then: then)
        return Placement(token: token, epoch: epoch, start: start, end: end, gain: gain)
    }

    /// Places the overlap of crossfade `partner` behind the outgoing item: a mix of `frames`
    /// frames at `sourceRate` (the gains are in it), whose incoming part is the partner's first
    /// `incomingFrames`; the rest of the partner follows it.
    mutating func placeOverlap(_ partner: Partner, frames: AudioFramePosition, sourceRate: Double,
                               incomingFrames: AudioFramePosition) -> Placement {
        let (token, epoch) = append(key: partner.place.key, start: 0, end: frames, sourceRate: sourceRate,
                                    order: partner.place.order, then: .rest(partner.place, frame: incomingFrames))
        return Placement(token: token, epoch: epoch, start: 0, end: frames, gain: 1)
    }

    /// Records a segment about to go on the node; returns its token and epoch for its handlers.
    mutating func append(key: UInt64, start: AudioFramePosition, end: AudioFramePosition, sourceRate: Double,
                         order: PlayOrder, then: Continuation) -> (token: UInt64, epoch: UInt64) {
        let token = nextToken
        nextToken += 1
        segments.append(Segment(key: key, token: token, startFrame: start, frames: max(0, end - start),
                                sourceRate: sourceRate, order: order, then: then))
        return (token, epoch)
    }

    /// Forgets the segment `token` (the node refused it).
    mutating func dropLast(token: UInt64) {
        if segments.last?.token == token { segments.removeLast() }
    }

    /// The segment whose read ended (`token` of `epoch`) when it is still the last one scheduled —
    /// what follows it is to be scheduled now — or nil for a stale completion.
    func consumed(token: UInt64, epoch e: UInt64) -> Segment? {
        guard e == epoch, let last = segments.last, last.token == token else { return nil }
        return last
    }

    /// Whether segment `token` of `epoch` is still the last one scheduled.
    func isLast(token: UInt64, epoch e: UInt64) -> Bool { consumed(token: token, epoch: e) != nil }

    /// Segment `token` of `epoch` has been rendered to its last frame on an engine running at
    /// `engineRate` and its end is taken as heard at once (an output that holds nothing): the
    /// next segment (if any) is already playing. ``markRendered(token:epoch:)`` then
    /// ``joinHeard(engineRate:)``.
    mutating func rendered(token: UInt64, epoch e: UInt64, engineRate: Double) -> Rendered {
        guard markRendered(token: token, epoch: e) else { return .ignored }
        return joinHeard(engineRate: engineRate)
    }

    /// Records that segment `token` of `epoch` has been rendered to its last frame (its end is
    /// not heard yet: the output holds it). False for a stale completion, or one out of order.
    mutating func markRendered(token: UInt64, epoch e: UInt64) -> Bool {
        guard e == epoch, renderedUnheard < segments.count, segments[renderedUnheard].token == token else { return false }
        renderedUnheard += 1
        return true
    }

    /// Whether every segment scheduled has been rendered: nothing follows the last join (the
    /// queue's end is rendered).
    var allRendered: Bool { renderedUnheard == segments.count }

    /// The entry of the segment the node renders now (the first not rendered to its end), which a
    /// restart that keeps what the output holds goes on with; nil when every one is rendered.
    var renderingKey: UInt64? { renderedUnheard < segments.count ? segments[renderedUnheard].key : nil }

    /// The player-node frame at which the head's end (a join, or the queue's end) is heard, with
    /// the engine at `engineRate`: nil until the node has rendered that end.
    func joinFrame(engineRate: Double) -> Int64? {
        guard renderedUnheard > 0, let head = segments.first else { return nil }
        return headStartPlayerFrame + Self.playerFrames(head, engineRate: engineRate)
    }

    /// The head's end, rendered, has been heard (``joinFrame(engineRate:)`` reached): the next
    /// segment becomes the head, from the join on. Only when ``joinFrame(engineRate:)`` is not nil.
    mutating func joinHeard(engineRate: Double) -> Rendered {
        guard renderedUnheard > 0, let head = segments.first else { return .ignored }
        segments.removeFirst()
        renderedUnheard -= 1
        headStartPlayerFrame += Self.playerFrames(head, engineRate: engineRate)
        guard let next = segments.first else {
            return .finished(ended: head.key, position: Double(head.startFrame + head.frames) / head.sourceRate)
        }
        return next.key == head.key ? .sameItem(order: next.order, current: next.key)
            : .advanced(ended: head.key, order: next.order, current: next.key)
    }

    /// A restart that keeps what the output holds: the node, which had rendered to player frame
    /// `rendered`, was stopped and goes on from player frame `restartFrame` (its timeline starts
    /// again). The segments rendered whose ends are not heard yet stay — their joins are heard,
    /// and announced, when they would have been — and the segment the node was rendering
    /// (``segment(renderedAt:engineRate:)``) is cut
    /// where it had rendered to, as rendered: its end is a join into the rest of the same entry,
    /// which the restart schedules behind it (from ``Cut/seconds``). What came after it was read,
    /// not rendered: it is forgotten, never heard nor announced. Every completion of before is
    /// stale from now on. Nil, and nothing changes, when the node renders nothing scheduled (the
    /// queue's end rendered, or nothing scheduled).
    mutating func keepRendered(upTo rendered: Int64, restartingAt restartFrame: Int64, engineRate: Double) -> Cut? {
        guard let (i, joinAt) = segment(renderedAt: rendered, engineRate: engineRate) else { return nil }
        var cut = segments[i]
        let done = AudioFramePosition((Double(max(0, rendered - joinAt)) * cut.sourceRate / engineRate).rounded())
        cut.frames = min(cut.frames, done)
        cut.then = .restarted
        segments.removeSubrange(i...)
        segments.append(cut)
        renderedUnheard = segments.count
        headStartPlayerFrame += restartFrame - rendered
        epoch += 1
        return Cut(key: cut.key, order: cut.order, seconds: Double(cut.startFrame + cut.frames) / cut.sourceRate)
    }

    /// The segment the node renders at player frame `rendered` — past every segment it has
    /// rendered to its end, whether that completion has come yet or not (the node runs ahead of
    /// its events) — and the player frame at which it began; nil when it has rendered them all.
    func segment(renderedAt rendered: Int64, engineRate: Double) -> (index: Int, start: Int64)? {
        var start = headStartPlayerFrame
        for (i, s) in segments.enumerated() {
            let end = start + Self.playerFrames(s, engineRate: engineRate)
            if rendered < end && i >= renderedUnheard { return (i, start) }
            start = end
        }
        return nil
    }

    /// Where a restart that kept what the output holds goes on: entry `key`, with the play order
    /// as it will be once that entry is current, from `seconds` into it.
    struct Cut: Sendable, Equatable {
        var key: UInt64
        var order: PlayOrder
        var seconds: Double
    }

    private static func playerFrames(_ s: Segment, engineRate: Double) -> Int64 {
        Int64((Double(s.frames) * engineRate / s.sourceRate).rounded())
    }

    /// Seconds into the current item with the node at `playerSampleTime` on an engine at
    /// `engineRate`; nil when nothing is scheduled or the node has no time yet. Never before the
    /// head's first frame nor past its last (the head's end rendered, the next segment's frames
    /// are not the head's).
    func currentTime(playerSampleTime: Int64?, engineRate: Double) -> Double? {
        guard let head = segments.first, let t = playerSampleTime else { return nil }
        let played = min(Double(max(0, t - headStartPlayerFrame)) / engineRate, Double(head.frames) / head.sourceRate)
        return Double(head.startFrame) / head.sourceRate + played
    }

    /// Seconds into the current item with the node at `playerSampleTime`, not clamped to the
    /// head: before its start while earlier frames (the item before) are being played, past its
    /// end once its end has been. Nil as ``currentTime(playerSampleTime:engineRate:)``.
    func unclampedTime(playerSampleTime: Int64?, engineRate: Double) -> Double? {
        guard let head = segments.first, let t = playerSampleTime else { return nil }
        return Double(head.startFrame) / head.sourceRate + Double(t - headStartPlayerFrame) / engineRate
    }

    /// The current item's duration in seconds (nil before it has been scheduled): where the last
    /// of the head's segments of the same entry ends (a crossfade's overlap and the rest after
    /// it, a segment cut by a restart and the rest re-scheduled after it are one item).
    var currentDuration: Double? {
        guard var last = segments.first else { return nil }
        for s in segments.dropFirst() {
            guard last.then.continuesItem else { break }
            last = s
        }
        return Double(last.startFrame + last.frames) / last.sourceRate
    }

    /// The index of the first segment after the head's item (past the segments that are more of
    /// it); `segments.count` when none is scheduled.
    private var afterHeadItem: Int {
        var i = 1
        while i < segments.count, segments[i - 1].then.continuesItem { i += 1 }
        return i
    }

    /// Whether what is scheduled after the current item no longer matches: the head is not entry
    /// `current`, or what follows it is not entry `next` (nil: nothing follows).
    func lookaheadIsStale(current: UInt64?, next: UInt64?) -> Bool {
        guard segments.count > 1, let current else { return false }
        guard current == segments[0].key else { return true }
        let i = afterHeadItem
        return i < segments.count && next != segments[i].key
    }
}
