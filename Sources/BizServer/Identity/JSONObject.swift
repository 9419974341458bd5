import UpCore

/// A JSON object whose member names are unique, as every document biz-server reads about end
/// users must be: a JWT header or claims set (RFC 7519 §4 lets a parser refuse duplicates, and a
/// second `sub` or `exp` is exactly what a forger would try), a JWK, the `jwt` configuration block.
struct JSONObject {
    /// Members by name.
    let members: [String: JSONValue]

    /// Why `value` is not such an object.
    enum Problem: Error, Equatable {
        /// Not an object at all.
        case notAnObject
        /// This member name appears more than once.
        case duplicate(String)
    }

    init(_ value: JSONValue) throws(Problem) {
        guard case .object(let list) = value else { throw .notAnObject }
        var members: [String: JSONValue] = [:]
        for (name, member) in list {
            guard members.updateValue(member, forKey: name) == nil else { throw .duplicate(name) }
        }
        self.members = members
    }

    /// Parses `bytes` as one JSON document holding such an object; nil for anything else.
    static func parse(_ bytes: some Collection<UInt8>) -> Result<JSONObject, Problem>? {
        guard let value = try? JSONValue.parse(bytes) else { return nil }
        return Result { () throws(Problem) in try JSONObject(value) }
    }

    subscript(name: String) -> JSONValue? {
        // An explicit null is the same as an absent member here: no member we read may be null.
        guard let value = members[name], value != .null else { return nil }
        return value
    }
}
