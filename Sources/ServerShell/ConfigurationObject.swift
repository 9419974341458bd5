public import Basics
import UpCore

/// One JSON object of a configuration file, read key by key with the type each key must have.
///
/// Every key asked for is remembered, present or not; ``finish()`` then refuses any key of this
/// object, or of the objects read from it, that nobody asked for — with the closest asked-for key
/// as a suggestion. Keys starting with `_` (`_comment`) are notes and never refused. `null`
/// counts as absent. Every failure is a one-line ``ConfigurationError`` naming the key by its
/// path (`clients[0].keyPrefix`) and the file.
///
/// Reading a nested block is one call and a block of its own:
///
/// ```swift
/// if let jwt = try file.object("jwt") {
///     configuration.jwt = JWTSettings(issuer: try jwt.string("issuer") ?? "upgate", …)
/// }
/// try file.finish()   // also checks every key of "jwt"
/// ```
public final class ConfigurationObject {
    /// The key path of this object (`""` at the top, `callback`, `clients[0]`).
    public let path: String
    /// The file, as the user named it.
    public let source: String
    private let members: [(key: String, value: JSONValue)]
    private var asked: [String] = []
    private var children: [ConfigurationObject] = []

    init(members: [(key: String, value: JSONValue)], path: String, source: String) {
        self.members = members
        self.path = path
        self.source = source
    }

    /// The full name of `key` in this object, e.g. `clients[0].keyPrefix`.
    public func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// `"<key>" in <file> <problem>`: for checks the caller makes on a value it read.
    public func invalid(_ key: String, _ problem: String) -> ConfigurationError {
        ConfigurationError("\"\(name(key))\" in \(source) \(problem)")
    }

    /// `"<key>" is missing in <file>`.
    public func missing(_ key: String) -> ConfigurationError {
        ConfigurationError("\"\(name(key))\" is missing in \(source)")
    }

    private func value(_ key: String) throws(ConfigurationError) -> JSONValue? {
        if !asked.contains(key) { asked.append(key) }
        let matching = members.filter { $0.key == key }
        // JSON allows a repeated name, and parsers differ on which one wins: refuse the doubt.
        guard matching.count <= 1 else { throw invalid(key, "is given twice") }
        guard let value = matching.first?.value, value != .null else { return nil }
        return value
    }

    private func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> ConfigurationError {
        var shown = value.serialized()
        if shown.count > 60 { shown = String(shown.prefix(57)) + "…" }
        return invalid(key, "must be \(expected), got \(shown)")
    }

    /// A string value.
    public func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let value = try value(key) else { return nil }
        guard case .string(let text) = value else { throw mismatch(key, "a string", value) }
        return text
    }

    /// A string value that must be present.
    public func requiredString(_ key: String) throws(ConfigurationError) -> String {
        guard let text = try string(key) else { throw missing(key) }
        return text
    }

    /// An integer within `range` (default: what `T` holds; the message shows the range unless
    /// `T` is a 64-bit type without one).
    public func integer<T: FixedWidthInteger & Sendable>(
        _ key: String, as type: T.Type, in range: ClosedRange<T>? = nil
    ) throws(ConfigurationError) -> T? {
        guard let value = try value(key) else { return nil }
        let bounds = range ?? T.min...T.max
        let expected = range != nil || T.bitWidth < 64 ? "an integer \(bounds.lowerBound)…\(bounds.upperBound)" : "an integer"
        guard case .int(let number) = value, let typed = T(exactly: number), bounds.contains(typed) else {
            throw mismatch(key, expected, value)
        }
        return typed
    }

    /// An `Int` (see ``integer(_:as:in:)``).
    public func integer(_ key: String, in range: ClosedRange<Int>? = nil) throws(ConfigurationError) -> Int? {
        try integer(key, as: Int.self, in: range)
    }

    /// A number (integer or not).
    public func number(_ key: String) throws(ConfigurationError) -> Double? {
        guard let value = try value(key) else { return nil }
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: throw mismatch(key, "a number", value)
        }
    }

    /// `true` or `false`.
    public func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = try value(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, "true or false", value) }
        return flag
    }

    /// One of `T`'s raw values, e.g. `"form"` or `"json"`.
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) throws(ConfigurationError) -> T?
    where T.RawValue == String {
        guard let value = try value(key) else { return nil }
        guard case .string(let text) = value, let choice = T(rawValue: text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            throw mismatch(key, names, value)
        }
        return choice
    }

    /// An array of strings.
    public func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let value = try value(key) else { return nil }
        guard case .array(let elements) = value else { throw mismatch(key, "an array of strings", value) }
        var texts: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else { throw mismatch("\(key)[\(index)]", "a string", element) }
            texts.append(text)
        }
        return texts
    }

    /// An array of integers, each within `range` (default: what `T` holds).
    public func integers<T: FixedWidthInteger & Sendable>(
        _ key: String, as type: T.Type, in range: ClosedRange<T>? = nil
    ) throws(ConfigurationError) -> [T]? {
        guard let value = try value(key) else { return nil }
        guard case .array(let elements) = value else { throw mismatch(key, "an array of integers", value) }
        let bounds = range ?? T.min...T.max
        var numbers: [T] = []
        for (index, element) in elements.enumerated() {
            guard case .int(let number) = element, let typed = T(exactly: number), bounds.contains(typed) else {
                throw mismatch("\(key)[\(index)]", "an integer \(bounds.lowerBound)…\(bounds.upperBound)", element)
            }
            numbers.append(typed)
        }
        return numbers
    }

    /// An object whose every value is a string (`{"x:app": "demo"}`).
    public func stringMap(_ key: String) throws(ConfigurationError) -> [String: String]? {
        guard let value = try value(key) else { return nil }
        guard case .object(let members) = value else { throw mismatch(key, "an object of strings", value) }
        var map: [String: String] = [:]
        for (name, element) in members {
            guard case .string(let text) = element else { throw mismatch("\(key).\(name)", "a string", element) }
            map[name] = text
        }
        return map
    }

    /// A nested object, read like this one and checked by this one's ``finish()``.
    public func object(_ key: String) throws(ConfigurationError) -> ConfigurationObject? {
        guard let value = try value(key) else { return nil }
        guard case .object(let members) = value else { throw mismatch(key, "an object", value) }
        let child = ConfigurationObject(members: members, path: name(key), source: source)
        children.append(child)
        return child
    }

    /// An array of objects (`clients`), each read like this one and checked by ``finish()``.
    public func objects(_ key: String) throws(ConfigurationError) -> [ConfigurationObject]? {
        guard let value = try value(key) else { return nil }
        guard case .array(let elements) = value else { throw mismatch(key, "an array of objects", value) }
        var objects: [ConfigurationObject] = []
        for (index, element) in elements.enumerated() {
            guard case .object(let members) = element else { throw mismatch("\(key)[\(index)]", "an object", element) }
            let child = ConfigurationObject(members: members, path: "\(name(key))[\(index)]", source: source)
            children.append(child)
            objects.append(child)
        }
        return objects
    }

    /// Refuses the first key of this object (then of each object read from it) that was never
    /// asked for: `unknown key "prot" in <file> (did you mean "port"?)`.
    public func finish() throws(ConfigurationError) {
        for (key, _) in members where !key.hasPrefix("_") && !asked.contains(key) {
            var message = "unknown key \"\(name(key))\" in \(source)"
            if let suggestion = KeySuggestion.closest(to: key, among: asked) {
                message += " (did you mean \"\(name(suggestion))\"?)"
            }
            throw ConfigurationError(message)
        }
        for child in children { try child.finish() }
    }

    /// `an object`, `a string`, … for messages.
    static func kind(of value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "true or false"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
