// SPDX-License-Identifier: GPL-3.0-or-later

/// What a connection may do (MPD's `Permission.hxx`): `read`, `add`, `control`, `admin`, and
/// `player` (split from `control` in MPD 0.23; `control` still implies it).
public struct MPDPermissions: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = MPDPermissions(rawValue: 1)
    public static let add = MPDPermissions(rawValue: 2)
    public static let control = MPDPermissions(rawValue: 4)
    public static let admin = MPDPermissions(rawValue: 8)
    public static let player = MPDPermissions(rawValue: 16)
    /// What a connection has when no password is configured.
    public static let all: MPDPermissions = [.read, .add, .control, .admin, .player]

    /// The names MPD's configuration knows, in its order.
    public static let names: [(String, MPDPermissions)] = [
        ("read", .read), ("add", .add), ("player", .player), ("control", .control), ("admin", .admin),
    ]

    /// A comma-separated list as MPD reads `default_permissions` and the part of `password`
    /// after `@`: empty items are skipped, an unknown name is an error, `control` implies
    /// `player` (MPD 0.22 and older had no `player`).
    /// - Throws: ``MPDPermissionError`` naming the unknown permission.
    public init(parsing text: String) throws(MPDPermissionError) {
        var p = MPDPermissions()
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            guard let known = Self.names.first(where: { $0.0 == item }) else {
                throw MPDPermissionError("unknown permission \"\(item)\" in \"\(text)\" (known: read, add, player, control, admin)")
            }
            p.insert(known.1)
        }
        if p.contains(.control) { p.insert(.player) }
        self = p
    }

    /// The names, comma-separated (`read,add`).
    public var description: String {
        Self.names.filter { contains($0.1) }.map(\.0).joined(separator: ",")
    }
}

public struct MPDPermissionError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Who may do what: MPD's `password` settings (each `SECRET@PERMISSIONS`),
/// `default_permissions` and `local_permissions`. Without any password every connection may do
/// everything; with one, a connection starts with the default permissions (none unless set) —
/// on the Unix socket with the local permissions when they are set — and `password SECRET`
/// gives it that password's.
public struct MPDAccess: Sendable, Hashable {
    public private(set) var passwords: [String: MPDPermissions] = [:]
    /// What a connection has before `password` (nil: MPD's default — all without passwords,
    /// none with).
    public var defaultPermissions: MPDPermissions?
    /// What a connection on the Unix socket has before `password` (nil: the default
    /// permissions, as MPD's `local_permissions` when it is not set).
    public var localPermissions: MPDPermissions?

    public init() {}

    /// Everything allowed (no password, no default permissions).
    public static let open = MPDAccess()

    /// `SECRET@read,add,…` as MPD's `password` setting. A later one for the same secret wins.
    /// - Throws: ``MPDPermissionError`` naming the value: no `@`, or an unknown permission.
    public mutating func addPassword(parsing value: String) throws(MPDPermissionError) {
        guard let at = value.firstIndex(of: "@") else {
            throw MPDPermissionError("\"@\" not found in password string \"\(value)\" (expected SECRET@read,add,control,admin)")
        }
        let permissions = try MPDPermissions(parsing: String(value[value.index(after: at)...]))
        passwords[String(value[..<at])] = permissions
    }

    /// `default_permissions` as MPD reads it.
    public mutating func setDefaultPermissions(parsing value: String) throws(MPDPermissionError) {
        defaultPermissions = try MPDPermissions(parsing: value)
    }

    /// `local_permissions` as MPD reads it.
    public mutating func setLocalPermissions(parsing value: String) throws(MPDPermissionError) {
        localPermissions = try MPDPermissions(parsing: value)
    }

    /// What a new TCP connection may do.
    public var initialPermissions: MPDPermissions {
        defaultPermissions ?? (passwords.isEmpty ? .all : [])
    }

    /// What a new connection may do: on the Unix socket (`isLocal`) the local permissions when
    /// set, otherwise (and on TCP) the default ones (MPD's `GetPermissions` of its listener).
    public func initialPermissions(isLocal: Bool) -> MPDPermissions {
        isLocal ? (localPermissions ?? initialPermissions) : initialPermissions
    }

    /// The permissions `secret` gives, or nil (a wrong password).
    public func permissions(forPassword secret: String) -> MPDPermissions? { passwords[secret] }
}
