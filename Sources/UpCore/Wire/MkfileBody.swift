/// The `mkfile` body: the last ctx of every block, in file order, joined by `,`
/// (qiniu-protocol.md §4.3).
///
/// Shape only: each ctx is then authenticated with ``BlockContext/decode(_:mac:now:)`` and the
/// server checks completeness and sizes (§4.3, §9.5: an empty or short list is a 400 size
/// mismatch, which is how a client's dropped block surfaces).
public struct MkfileBody: Sendable, Equatable {
    /// The ctx texts, in file order; empty for an empty body.
    public var contexts: [String]

    /// Creates a body value.
    ///
    /// - Parameter contexts: ctx texts in file order.
    public init(contexts: [String]) {
        self.contexts = contexts
    }

    /// Parses a body.
    ///
    /// Surrounding ASCII whitespace (a trailing newline from a hand-written client) is ignored;
    /// an empty body means no blocks. Inside, no empty element is allowed: no trailing or double
    /// comma, no spaces.
    ///
    /// - Parameter body: The raw body bytes.
    /// - Returns: The ctx list.
    /// - Throws: ``UpError`` `.badRequest` (400) naming the position of the first bad element.
    public static func parse(_ body: some Collection<UInt8>) throws(UpError) -> MkfileBody {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let trimmed = Array(body).drop(while: isSpace).reversed().drop(while: isSpace).reversed()
        guard !trimmed.isEmpty else { return MkfileBody(contexts: []) }
        var contexts: [String] = []
        let pieces = trimmed.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        for (index, piece) in pieces.enumerated() {
            guard isContextText(piece) else {
                throw UpError(
                    .badRequest, detail: "mkfile body element \(index + 1) is empty or not [A-Za-z0-9_=-]")
            }
            contexts.append(String(decoding: piece, as: UTF8.self))
        }
        return MkfileBody(contexts: contexts)
    }

    /// The body text: ``contexts`` joined by `,`.
    public var text: String { contexts.joined(separator: ",") }

    /// Whether `text` is non-empty and uses only the ctx alphabet `[A-Za-z0-9_=-]` (§4.2).
    static func isContextText(_ text: some StringProtocol) -> Bool { isContextText(text.utf8) }

    static func isContextText(_ bytes: some Collection<UInt8>) -> Bool {
        !bytes.isEmpty
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "="), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
