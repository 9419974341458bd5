/// A parsed route path such as `/v1/uploads/:id` or `/mkfile/*`.
///
/// Segments are literals (matched exactly against the raw path), `:name` parameters (one
/// segment, percent-decoded) or a final `*` capturing the rest of the raw path (possibly empty).
public struct RoutePattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
        case wildcard
    }

    /// The pattern as written.
    public let description: String
    let segments: [Segment]
    /// Set when every segment is a literal: such a pattern matches exactly this path.
    /// The whole pattern when it has no parameter or wildcard (matched by string equality).
    let literalPath: String?

    /// Parses `pattern`; returns `nil` if it does not start with `/`, has an empty `:` name, or
    /// has `*` anywhere but the last segment.
    public init?(_ pattern: String) {
        guard pattern.hasPrefix("/") else { return nil }
        var segments: [Segment] = []
        let parts = Self.segments(of: pattern)
        for (index, part) in parts.enumerated() {
            if part == "*" {
                guard index == parts.count - 1 else { return nil }
                segments.append(.wildcard)
            } else if part.hasPrefix(":") {
                guard part.count > 1 else { return nil }
                segments.append(.parameter(String(part.dropFirst())))
            } else {
                segments.append(.literal(String(part)))
            }
        }
        self.description = pattern
        self.segments = segments
        let allLiteral = segments.allSatisfy { if case .literal = $0 { true } else { false } }
        self.literalPath = allLiteral ? pattern : nil
    }

    /// Literal segments count most, then parameters; a wildcard least. Used to prefer
    /// `/v1/uploads/stats` over `/v1/uploads/:id`.
    var specificity: (literals: Int, parameters: Int, wildcard: Bool) {
        var literals = 0, parameters = 0, wildcard = false
        for segment in segments {
            switch segment {
            case .literal: literals += 1
            case .parameter: parameters += 1
            case .wildcard: wildcard = true
            }
        }
        return (literals, parameters, wildcard)
    }

    /// Matches a raw path; returns the captured parameters or `nil`.
    func match(_ path: String) -> [String: String]? {
        match(path, parts: Self.segments(of: path))
    }

    /// Matches a raw path already split by ``segments(of:)`` (once per request, not per route).
    func match(_ path: String, parts: [Substring]) -> [String: String]? {
        if let literalPath, !path.isEmpty { return path == literalPath ? [:] : nil }
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .wildcard:
                parameters["*"] = parts[index...].joined(separator: "/")
                return parameters
            case .literal(let text):
                guard index < parts.count, parts[index] == text else { return nil }
            case .parameter(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                parameters[name] = PercentDecoding.decode(parts[index], plusAsSpace: false)
            }
        }
        return parts.count == segments.count ? parameters : nil
    }

    /// `/` → no segments; `/a/b/` → `a`, `b`, `` (a trailing slash is significant).
    static func segments(of path: String) -> [Substring] {
        let trimmed = path.dropFirst()
        if trimmed.isEmpty { return [] }
        return trimmed.split(separator: "/", omittingEmptySubsequences: false)
    }
}
