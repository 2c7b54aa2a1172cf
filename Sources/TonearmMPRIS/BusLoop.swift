// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus
import Foundation
import TonearmCore
import TonearmDBus
import TonearmNowPlaying

/// The D-Bus thread's side of the service: the connection and everything only that thread
/// touches. Created, used and dropped on the D-Bus thread (it is deliberately not Sendable).
final class BusLoop {
    private let core: ServiceCore
    private var connection: OpaquePointer?
    /// The player properties last published (without `Position`, which is never signalled).
    private var published: [String: DBusValue] = [:]
    private let artwork: ArtworkCache

    /// The reply to a method call.
    private enum Reply: Sendable {
        case values([DBusValue])
        case error(String, String)

        static let ok = Reply.values([])
        static func invalidArgs(_ m: String) -> Reply { .error("org.freedesktop.DBus.Error.InvalidArgs", m) }
    }

    init(core: ServiceCore) {
        self.core = core
        artwork = ArtworkCache(directory: core.configuration.artworkDirectory)
    }

    // MARK: Connection

    /// Connects, exports the object (before owning the name, so that no client sees the name
    /// without the object), and owns the name. Returns the name owned.
    func connect() -> Result<String, MPRISError> {
        let conn: OpaquePointer
        do {
            conn = try DBusSupport.connect(address: core.configuration.busAddress)
        } catch {
            return .failure(.noSessionBus(error.message))
        }
        connection = conn
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let configuration = core.configuration


        var vtable = DBusObjectPathVTable()
        vtable.message_function = { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return Unmanaged<BusLoop>.fromOpaque(data).takeUnretainedValue().handle(message)
        }
        guard dbus_connection_try_register_object_path(conn, MPRIS.objectPath, &vtable,
                                                       Unmanaged.passUnretained(self).toOpaque(), &error) != 0 else {
            return .failure(.setupFailed(Self.message(error, "cannot export \(MPRIS.objectPath)")))
        }
        published = currentPlayerProperties()
        published.removeValue(forKey: "Position")

        let base = "org.mpris.MediaPlayer2." + configuration.suffix
        guard dbus_validate_bus_name(base, nil) != 0 else {
            return .failure(.nameUnavailable("\(base) is not a valid bus name"))
        }
        baseName = base
        // Told when the bus gives the name or takes it away (NameAcquired, NameLost).
        let filter: DBusHandleMessageFunction = { _, message, data in
            guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            return Unmanaged<BusLoop>.fromOpaque(data).takeUnretainedValue().nameSignal(message)
        }
        guard dbus_connection_add_filter(conn, filter, Unmanaged.passUnretained(self).toOpaque(), nil) != 0 else {
            return .failure(.setupFailed("cannot follow the bus name"))
        }
        // Queued for the base name (replaceable: a video takes it over, the bus gives it back).
        var flags = CDBUS_NAME_FLAG_ALLOW_REPLACEMENT
        if configuration.takesOverName { flags |= CDBUS_NAME_FLAG_REPLACE_EXISTING }
        let reply = dbus_bus_request_name(conn, base, flags, &error)
        if dbus_error_is_set(&error) != 0 {
            return .failure(.nameUnavailable(Self.message(error, "cannot request \(base)")))
        }
        if reply == CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER { return .success(base) }
        // Waiting in the queue (or owned for good by a connection that does not let it go):
        // the instance name meanwhile.
        return takeInstanceName(conn).map { .success($0) } ?? .failure(
            .nameUnavailable("\(base) and its instance name are owned by other connections"))
    }

    /// The well-known name, once connected.
    private var baseName = ""
    /// The instance name, while owned.
    private var instanceName: String?

    /// Owns `<base>.instance<pid>`; the name, or nil when another connection has it.
    private func takeInstanceName(_ conn: OpaquePointer) -> String? {
        if let instanceName { return instanceName }
        let name = baseName + ".instance\(getpid())"
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let reply = dbus_bus_request_name(conn, name, CDBUS_NAME_FLAG_DO_NOT_QUEUE, &error)
        guard dbus_error_is_set(&error) == 0, reply == CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER else { return nil }
        instanceName = name
        return name
    }

    /// NameAcquired / NameLost of the base name (during dispatch, on the D-Bus thread): the
    /// instance name is given up while the base is owned and taken while it is not.
    private func nameSignal(_ message: OpaquePointer) -> DBusHandlerResult {
        guard let conn = connection, dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_SIGNAL,
              dbus_message_get_interface(message).map({ String(cString: $0) }) == "org.freedesktop.DBus",
              let member = dbus_message_get_member(message).map({ String(cString: $0) }),
              member == "NameAcquired" || member == "NameLost",
              let args = DBusValue.arguments(of: message), args.count == 1, case .string(let name) = args[0],
              name == baseName else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        if member == "NameAcquired" {
            core.setBusName(baseName)
            if let instance = instanceName {
                var error = DBusError()
                dbus_error_init(&error)
                _ = dbus_bus_release_name(conn, instance, &error)
                dbus_error_free(&error)
                instanceName = nil
            }
        } else {
            if let instance = takeInstanceName(conn) { core.setBusName(instance) }
        }
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    /// Closes the connection (which also gives up the name).
    func disconnect() {
        guard let conn = connection else { return }
        connection = nil
        _ = dbus_connection_unregister_object_path(conn, MPRIS.objectPath)
        DBusSupport.close(conn)
    }

    /// Serves the connection until ``ServiceCore/stop()`` or the bus goes away (see
    /// `DBusSupport.serve`): publishes property changes and `Seeked` as they are queued.
    func run() {
        guard let conn = connection else { return }
        DBusSupport.serve(conn, wakeFD: core.wakeFD) {
            let pending = core.takePending()
            if pending.stop { return true }
            if pending.propertiesDirty { publishChanges() }
            for position in pending.seeks {
                sendSignal(interface: MPRIS.playerInterface, member: "Seeked",
                           [.int64(PlayerProperties.microseconds(position))])
            }
            return false
        }
    }

    // MARK: Properties

    private func currentPlayerProperties() -> [String: DBusValue] {
        PlayerProperties(snapshot: core.infoCenter.snapshot(), commands: core.commandCenter, now: .now,
                         artURL: { self.artwork.url(for: $0) }).values
    }

    private var rootProperties: [String: DBusValue] {
        let c = core.configuration
        return [
            "CanQuit": .bool(core.commandCenter.quit.isAvailable),
            "CanRaise": .bool(false),
            "HasTrackList": .bool(false),
            "Identity": .string(c.identity),
            "DesktopEntry": .string(c.desktopEntry),
            "SupportedUriSchemes": .strings(c.uriSchemes),
            "SupportedMimeTypes": .strings(c.mimeTypes),
        ]
    }

    /// Sends `PropertiesChanged` with the player properties whose value changed since the last time.
    private func publishChanges() {
        var now = currentPlayerProperties()
        now.removeValue(forKey: "Position")
        let changed = now.filter { published[$0.key] != $0.value }
        published = now
        guard !changed.isEmpty else { return }
        sendSignal(interface: MPRIS.propertiesInterface, member: "PropertiesChanged",
                   [.string(MPRIS.playerInterface), .vardict(changed), .strings([])])
    }

    private func sendSignal(interface: String, member: String, _ values: [DBusValue]) {
        guard let conn = connection, let signal = dbus_message_new_signal(MPRIS.objectPath, interface, member) else { return }
        defer { dbus_message_unref(signal) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(signal, &iter)
        guard values.allSatisfy({ $0.append(to: &iter) }) else { return }
        _ = dbus_connection_send(conn, signal, nil)
    }

    // MARK: Calls

    /// Answers one method call to the object (called by libdbus during dispatch, on the D-Bus thread).
    private func handle(_ message: OpaquePointer) -> DBusHandlerResult {
        guard dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_METHOD_CALL else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        let interface = dbus_message_get_interface(message).map { String(cString: $0) }
        let member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        let reply: Reply
        if let args = DBusValue.arguments(of: message) {
            reply = call(interface: interface ?? Self.interface(of: member), member: member, args)
        } else {
            reply = .invalidArgs("unsupported argument types")
        }
        send(reply, to: message)
        return DBUS_HANDLER_RESULT_HANDLED
    }

    /// The interface of a method called without one.
    private static func interface(of member: String) -> String {
        switch member {
        case "Introspect": MPRIS.introspectableInterface
        case "Get", "GetAll", "Set": MPRIS.propertiesInterface
        case "Raise", "Quit": MPRIS.rootInterface
        default: MPRIS.playerInterface
        }
    }

    private func call(interface: String, member: String, _ args: [DBusValue]) -> Reply {
        let unknown = Reply.error("org.freedesktop.DBus.Error.UnknownMethod",
                                  "no method \(member) in interface \(interface) of \(MPRIS.objectPath)")
        switch interface {
        case MPRIS.introspectableInterface:
            guard member == "Introspect" else { return unknown }
            guard args.isEmpty else { return .invalidArgs("Introspect takes no arguments") }
            return .values([.string(MPRIS.introspectionXML)])
        case MPRIS.propertiesInterface:
            return properties(member, args) ?? unknown
        case MPRIS.rootInterface:
            guard member == "Raise" || member == "Quit" else { return unknown }
            guard args.isEmpty else { return .invalidArgs("\(member) takes no arguments") }
            let commands = core.commandCenter
            if member == "Quit", commands.quit.isAvailable { return reply(commands.dispatch(commands.quit)) }
            return .error("org.freedesktop.DBus.Error.NotSupported", "\(member) is not supported (Can\(member) is false)")
        case MPRIS.playerInterface:
            return player(member, args) ?? unknown
        default:
            return .error("org.freedesktop.DBus.Error.UnknownInterface", "no interface \(interface) on \(MPRIS.objectPath)")
        }
    }

    private func properties(_ member: String, _ args: [DBusValue]) -> Reply? {
        switch member {
        case "Get":
            guard args.count == 2, case .string(let interface) = args[0], case .string(let name) = args[1] else {
                return .invalidArgs("Get takes (ss)")
            }
            if interface == MPRIS.rootInterface || (interface.isEmpty && rootProperties[name] != nil) {
                guard let v = rootProperties[name] else { return unknownProperty(name, interface) }
                return .values([.variant(v)])
            }
            if interface == MPRIS.playerInterface || interface.isEmpty {
                guard let v = currentPlayerProperties()[name] else { return unknownProperty(name, interface) }
                return .values([.variant(v)])
            }
            return unknownInterface(interface)
        case "GetAll":
            guard args.count == 1, case .string(let interface) = args[0] else { return .invalidArgs("GetAll takes (s)") }
            switch interface {
            case MPRIS.rootInterface: return .values([.vardict(rootProperties)])
            case MPRIS.playerInterface: return .values([.vardict(currentPlayerProperties())])
            case MPRIS.propertiesInterface, MPRIS.introspectableInterface: return .values([.vardict([:])])
            default: return unknownInterface(interface)
            }
        case "Set":
            guard args.count == 3, case .string(let interface) = args[0], case .string(let name) = args[1],
                  case .variant(let value) = args[2] else {
                return .invalidArgs("Set takes (ssv)")
            }
            return set(interface: interface, name: name, value)
        default:
            return nil
        }
    }

    private func unknownProperty(_ name: String, _ interface: String) -> Reply {
        .error("org.freedesktop.DBus.Error.UnknownProperty", "no property \(name) in interface \(interface)")
    }

    private func unknownInterface(_ interface: String) -> Reply {
        .error("org.freedesktop.DBus.Error.UnknownInterface", "no interface \(interface) on \(MPRIS.objectPath)")
    }

    private func set(interface: String, name: String, _ value: DBusValue) -> Reply {
        let readOnly = Reply.error("org.freedesktop.DBus.Error.PropertyReadOnly", "property \(name) is read-only")
        if interface == MPRIS.rootInterface || (interface.isEmpty && rootProperties[name] != nil) {
            return rootProperties[name] == nil ? unknownProperty(name, interface) : readOnly
        }
        guard interface == MPRIS.playerInterface || interface.isEmpty else { return unknownInterface(interface) }
        let commands = core.commandCenter
        switch (name, value) {
        case ("LoopStatus", .string(let s)):
            guard let r = MPRIS.repeatType(loopStatus: s) else {
                return .invalidArgs("LoopStatus must be None, Track or Playlist, not \(s)")
            }
            return reply(commands.dispatch(commands.changeRepeatMode, ChangeRepeatModeCommandEvent(repeatType: r)))
        case ("Shuffle", .bool(let on)):
            return reply(commands.dispatch(commands.changeShuffleMode,
                                           ChangeShuffleModeCommandEvent(shuffleType: on ? .songs : .off)))
        case ("Volume", .double(let v)):
            guard v.isFinite else { return .invalidArgs("Volume must be a finite number") }
            return reply(commands.dispatch(commands.changeVolume, ChangeVolumeCommandEvent(volume: min(1, max(0, v)))))
        case ("Rate", .double(let r)):
            guard r.isFinite else { return .invalidArgs("Rate must be a finite number") }
            if r == 0 { return reply(commands.dispatch(commands.pause)) }
            let props = currentPlayerProperties()
            guard case .double(let lo) = props["MinimumRate"], case .double(let hi) = props["MaximumRate"],
                  r >= lo, r <= hi else {
                return .invalidArgs("Rate \(r) is outside MinimumRate…MaximumRate")
            }
            return reply(commands.dispatch(commands.changePlaybackRate, ChangePlaybackRateCommandEvent(playbackRate: r)))
        case ("LoopStatus", _), ("Shuffle", _), ("Volume", _), ("Rate", _):
            return .invalidArgs("property \(name) has type \(published[name]?.signature ?? "?"), not \(value.signature)")
        default:
            return currentPlayerProperties()[name] == nil ? unknownProperty(name, interface) : readOnly
        }
    }

    private func player(_ member: String, _ args: [DBusValue]) -> Reply? {
        let commands = core.commandCenter
        let noArgs: Set<String> = ["Next", "Previous", "Pause", "PlayPause", "Stop", "Play"]
        if noArgs.contains(member), !args.isEmpty { return .invalidArgs("\(member) takes no arguments") }
        switch member {
        case "Next": return reply(commands.dispatch(commands.nextTrack))
        case "Previous": return reply(commands.dispatch(commands.previousTrack))
        case "Pause": return reply(commands.dispatch(commands.pause))
        case "Play": return reply(commands.dispatch(commands.play))
        case "Stop": return reply(commands.dispatch(commands.stop))
        case "PlayPause":
            if commands.togglePlayPause.isAvailable { return reply(commands.dispatch(commands.togglePlayPause)) }
            let playing = core.infoCenter.snapshot().shownPlaybackState == .playing
            return reply(commands.dispatch(playing ? commands.pause : commands.play))
        case "Seek":
            guard args.count == 1, case .int64(let offset) = args[0] else { return .invalidArgs("Seek takes (x)") }
            let snapshot = core.infoCenter.snapshot()
            guard let info = snapshot.nowPlayingInfo, let now = snapshot.elapsedTime(at: .now) else {
                return reply(.noActionableNowPlayingItem)
            }
            let target = max(0, now + Double(offset) / 1e6)
            if let d = info.duration, target > d { return reply(commands.dispatch(commands.nextTrack)) }
            return reply(commands.dispatch(commands.changePlaybackPosition,
                                           ChangePlaybackPositionCommandEvent(positionTime: target)))
        case "SetPosition":
            guard args.count == 2, case .objectPath(let track) = args[0], case .int64(let position) = args[1] else {
                return .invalidArgs("SetPosition takes (ox)")
            }
            guard let info = core.infoCenter.snapshot().nowPlayingInfo else { return reply(.noActionableNowPlayingItem) }
            guard track == MPRIS.trackID(info.persistentID) else {
                return .invalidArgs("stale track id \(track): the current track is \(MPRIS.trackID(info.persistentID))")
            }
            let seconds = Double(position) / 1e6
            guard position >= 0, info.duration.map({ seconds <= $0 }) ?? true else {
                return .invalidArgs("position \(position) µs is outside the track")
            }
            return reply(commands.dispatch(commands.changePlaybackPosition,
                                           ChangePlaybackPositionCommandEvent(positionTime: seconds)))
        case "OpenUri":
            guard args.count == 1, case .string(let text) = args[0] else { return .invalidArgs("OpenUri takes (s)") }
            guard commands.openURL.isAvailable else {
                return .error("org.freedesktop.DBus.Error.NotSupported", "OpenUri is not supported")
            }
            let schemes = core.configuration.uriSchemes.map { $0.lowercased() }
            guard let url = URL(userText: text), let scheme = url.scheme?.lowercased() else {
                return .invalidArgs("OpenUri: '\(text)' is not a URI")
            }
            guard schemes.contains(scheme) else {
                return .invalidArgs("OpenUri: the scheme '\(scheme)' is not one of SupportedUriSchemes (\(schemes.joined(separator: ", ")))")
            }
            return reply(commands.dispatch(commands.openURL, OpenURLCommandEvent(url: url)))
        default:
            return nil
        }
    }

    /// The reply for a command's status: nothing on success, an error otherwise.
    private func reply(_ status: RemoteCommandHandlerStatus) -> Reply {
        switch status {
        case .success: .ok
        case .noSuchContent: .error("org.tonearm.Error.NoSuchContent", "there is no such content")
        case .noActionableNowPlayingItem:
            .error("org.tonearm.Error.NoActionableNowPlayingItem", "nothing is playing that the command could act on")
        case .commandFailed: .error("org.tonearm.Error.CommandFailed", "the command is disabled or failed")
        }
    }

    private func send(_ reply: Reply, to call: OpaquePointer) {
        guard let conn = connection, dbus_message_get_no_reply(call) == 0 else { return }
        var message: OpaquePointer?
        switch reply {
        case .values(let values):
            message = dbus_message_new_method_return(call)
            if let m = message {
                var iter = DBusMessageIter()
                dbus_message_iter_init_append(m, &iter)
                if !values.allSatisfy({ $0.append(to: &iter) }) {
                    dbus_message_unref(m)
                    message = dbus_message_new_error(call, "org.freedesktop.DBus.Error.Failed", "cannot build the reply")
                }
            }
        case .error(let name, let text):
            message = dbus_message_new_error(call, name, text)
        }
        guard let message else { return }
        _ = dbus_connection_send(conn, message, nil)
        dbus_message_unref(message)
    }

    private static func message(_ error: DBusError, _ fallback: String) -> String { DBusSupport.text(error, fallback) }
}
