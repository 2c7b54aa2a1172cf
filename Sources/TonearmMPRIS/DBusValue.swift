// SPDX-License-Identifier: GPL-3.0-or-later
import CDBus

/// A D-Bus value, for building messages and reading their arguments. Used only on the MPRIS
/// service's D-Bus thread.
indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    /// Must be a valid object path: libdbus aborts the process on an invalid one, so
    /// ``append(to:)`` checks it with `dbus_validate_path` first.
    case objectPath(String)
    case signature(String)
    case variant(DBusValue)
    /// The elements' signature is stored, so that an empty array still has a type.
    case array(element: String, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])

    /// `as`
    static func strings(_ values: [String]) -> DBusValue { .array(element: "s", values.map { .string($0) }) }

    /// `a{sv}`, sorted by key.
    static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .array(element: "{sv}", entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) })
    }

    /// The D-Bus type signature.
    var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .dictEntry(let k, let v): "{" + k.signature + v.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    /// The value inside a variant (or the value itself).
    var unwrapped: DBusValue {
        if case .variant(let v) = self { return v.unwrapped }
        return self
    }

    /// Appends the value at `iter`. Returns false when libdbus runs out of memory or a string
    /// or path is invalid (then the message must not be sent).
    func append(to iter: inout DBusMessageIter) -> Bool {
        switch self {
        case .byte(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BYTE, &v) != 0
        case .bool(let b):
            var v: dbus_bool_t = b ? 1 : 0
            return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BOOLEAN, &v) != 0
        case .int16(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT16, &v) != 0
        case .uint16(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT16, &v) != 0
        case .int32(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &v) != 0
        case .uint32(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &v) != 0
        case .int64(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT64, &v) != 0
        case .uint64(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &v) != 0
        case .double(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_DOUBLE, &v) != 0
        case .string(let s): return Self.appendString(s, type: CDBUS_TYPE_STRING, to: &iter)
        case .objectPath(let s): return Self.appendString(s, type: CDBUS_TYPE_OBJECT_PATH, to: &iter)
        case .signature(let s): return Self.appendString(s, type: CDBUS_TYPE_SIGNATURE, to: &iter)
        case .variant(let inner):
            return Self.container(CDBUS_TYPE_VARIANT, inner.signature, &iter) { inner.append(to: &$0) }
        case .array(let element, let values):
            guard values.allSatisfy({ $0.signature == element }) else { return false }
            return Self.container(CDBUS_TYPE_ARRAY, element, &iter) { sub in values.allSatisfy { $0.append(to: &sub) } }
        case .dictEntry(let k, let v):
            return Self.container(CDBUS_TYPE_DICT_ENTRY, nil, &iter) { $0.append(k) && $0.append(v) }
        case .structure(let fields):
            return Self.container(CDBUS_TYPE_STRUCT, nil, &iter) { sub in fields.allSatisfy { $0.append(to: &sub) } }
        }
    }

    private static func appendString(_ s: String, type: Int32, to iter: inout DBusMessageIter) -> Bool {
        s.withCString { c -> Bool in
            // libdbus aborts on an invalid string, path or signature: check first.
            let valid: Bool
            switch type {
            case CDBUS_TYPE_OBJECT_PATH: valid = dbus_validate_path(c, nil) != 0
            case CDBUS_TYPE_SIGNATURE: valid = dbus_signature_validate(c, nil) != 0
            default: valid = dbus_validate_utf8(c, nil) != 0
            }
            guard valid else { return false }
            var p: UnsafePointer<CChar>? = c
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
    }

    private static func container(_ type: Int32, _ signature: String?, _ iter: inout DBusMessageIter,
                                  _ body: (inout DBusMessageIter) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) } != 0
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
        }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    /// Reads the value at `iter` (nil for a type this service does not take, such as a Unix fd).
    static func read(_ iter: inout DBusMessageIter) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case CDBUS_TYPE_BYTE: var v: UInt8 = 0; dbus_message_iter_get_basic(&iter, &v); return .byte(v)
        case CDBUS_TYPE_BOOLEAN: var v: dbus_bool_t = 0; dbus_message_iter_get_basic(&iter, &v); return .bool(v != 0)
        case CDBUS_TYPE_INT16: var v: Int16 = 0; dbus_message_iter_get_basic(&iter, &v); return .int16(v)
        case CDBUS_TYPE_UINT16: var v: UInt16 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint16(v)
        case CDBUS_TYPE_INT32: var v: Int32 = 0; dbus_message_iter_get_basic(&iter, &v); return .int32(v)
        case CDBUS_TYPE_UINT32: var v: UInt32 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint32(v)
        case CDBUS_TYPE_INT64: var v: Int64 = 0; dbus_message_iter_get_basic(&iter, &v); return .int64(v)
        case CDBUS_TYPE_UINT64: var v: UInt64 = 0; dbus_message_iter_get_basic(&iter, &v); return .uint64(v)
        case CDBUS_TYPE_DOUBLE: var v: Double = 0; dbus_message_iter_get_basic(&iter, &v); return .double(v)
        case CDBUS_TYPE_STRING, CDBUS_TYPE_OBJECT_PATH, CDBUS_TYPE_SIGNATURE:
            var p: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iter, &p)
            let s = p.map { String(cString: $0) } ?? ""
            return type == CDBUS_TYPE_STRING ? .string(s) : type == CDBUS_TYPE_OBJECT_PATH ? .objectPath(s) : .signature(s)
        case CDBUS_TYPE_VARIANT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return read(&sub).map { .variant($0) }
        case CDBUS_TYPE_ARRAY:
            guard let sig = dbus_message_iter_get_signature(&iter) else { return nil }
            let element = String(String(cString: sig).dropFirst())
            dbus_free(sig)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let values = readAll(&sub) else { return nil }
            return .array(element: element, values)
        case CDBUS_TYPE_DICT_ENTRY:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let kv = readAll(&sub), kv.count == 2 else { return nil }
            return .dictEntry(kv[0], kv[1])
        case CDBUS_TYPE_STRUCT:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return readAll(&sub).map { .structure($0) }
        default:
            return nil
        }
    }

    /// Reads the values from `iter` to the end of its container.
    static func readAll(_ iter: inout DBusMessageIter) -> [DBusValue]? {
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID {
            guard let v = read(&iter) else { return nil }
            values.append(v)
            dbus_message_iter_next(&iter)
        }
        return values
    }

    /// A message's arguments (nil when one has a type this service does not take).
    static func arguments(of message: OpaquePointer) -> [DBusValue]? {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        return readAll(&iter)
    }
}

extension DBusMessageIter {
    fileprivate mutating func append(_ value: DBusValue) -> Bool { value.append(to: &self) }
}
