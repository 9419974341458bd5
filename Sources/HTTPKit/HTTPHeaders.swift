/// Header fields in order, with names kept as written and looked up case-insensitively
/// (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in order.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from fields in order.
    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// Creates headers from a literal, in literal order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value for `name`, or `nil`.
    public subscript(name: String) -> String? {
        fields.first { Self.equalNames($0.name, name) }?.value
    }

    /// Every value for `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.equalNames($0.name, name) }.map(\.value)
    }

    /// Whether a field named `name` exists.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Makes room for `count` fields in all, so adding up to that many does not regrow the
    /// storage (every response gains a few on its way out).
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Appends a field, keeping existing ones with the same name.
    public mutating func add(name: String, value: String) { fields.append((name, value)) }

    /// Replaces every field named `name` with one field (appended if none existed).
    public mutating func set(name: String, value: String) {
        if let index = fields.firstIndex(where: { Self.equalNames($0.name, name) }) {
            fields[index].value = value
            var later = index + 1
            while later < fields.count {
                if Self.equalNames(fields[later].name, name) { fields.remove(at: later) } else { later += 1 }
            }
        } else {
            fields.append((name, value))
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) { fields.removeAll { Self.equalNames($0.name, name) } }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// ASCII case-insensitive comparison; field names are tokens, so no Unicode folding is needed.
    /// Scans the UTF-8 storage as `Span`s: a request looks headers up dozens of times, and
    /// iterating two `UTF8View`s in `zip` cost ~120 instructions per comparison.
    static func equalNames(_ a: String, _ b: String) -> Bool {
        let x = a.utf8.span, y = b.utf8.span
        guard x.count == y.count else { return false }
        var index = 0
        while index < x.count {
            let p = x[index], q = y[index]
            if p != q {
                let folded = p | 0x20
                guard folded == q | 0x20, folded >= 0x61, folded <= 0x7A else { return false }
            }
            index += 1
        }
        return true
    }
}
