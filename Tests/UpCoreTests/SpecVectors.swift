import Foundation
import Testing
import UpCore

/// `Vectors/vectors.json`: the qiniu-protocol.md §10 vectors produced by make_vectors.py,
/// read with UpCore's own ``JSONValue`` parser.
enum SpecVectors {
    static let root: JSONValue = {
        guard let url = Bundle.module.url(forResource: "vectors", withExtension: "json"),
            let data = try? Data(contentsOf: url),
            let value = try? JSONValue.parse([UInt8](data))
        else { fatalError("Vectors/vectors.json missing or unreadable") }
        return value
    }()

    static func object(_ name: String) -> JSONValue {
        guard let value = root[name] else { fatalError("vector \(name) missing") }
        return value
    }

    static func string(_ object: JSONValue, _ key: String) -> String {
        guard let value = object[key]?.stringValue else { fatalError("vector field \(key) missing") }
        return value
    }

    static func int(_ object: JSONValue, _ key: String) -> Int64 {
        guard let value = object[key]?.int64Value else { fatalError("vector field \(key) missing") }
        return value
    }

    static func keys(_ object: JSONValue) -> [String] {
        guard case .object(let members) = object else { return [] }
        return members.map(\.key)
    }

    /// One §10.1 token vector.
    struct Token: Sendable, CustomTestStringConvertible {
        let name: String
        let accessKey: String
        let policyJSON: String
        let encodedPolicy: String
        let token: String
        var testDescription: String { name }
    }

    static let secretKeys: [String: String] = ["test-ak": "test-sk", "MY_ACCESS_KEY": "MY_SECRET_KEY"]

    static let tokens: [Token] = keys(root).filter { $0.hasPrefix("uptoken_") }.map { name in
        let vector = object(name)
        return Token(
            name: name, accessKey: string(vector, "ak"), policyJSON: string(vector, "policy_json"),
            encodedPolicy: string(vector, "encoded_policy"), token: string(vector, "token"))
    }

    /// One §10.4 etag vector; the input is regenerated from its Python expression.
    struct EtagVector: Sendable, CustomTestStringConvertible {
        let name: String
        let length: Int
        let etag: String
        var testDescription: String { name }

        var bytes: [UInt8] {
            switch name {
            case "empty": []
            case "hello": Array("hello".utf8)
            case "9MiB_pattern": SpecVectors.pattern9MiB
            default: (0..<length).map { UInt8(truncatingIfNeeded: $0) }  // bytes(i % 256 for i in range(n))
            }
        }
    }

    static let etags: [EtagVector] = keys(object("etag")).map { name in
        let vector = object("etag")[name]!
        return EtagVector(name: name, length: Int(int(vector, "len")), etag: string(vector, "etag"))
    }

    /// `bytes(((i*31) + (i>>12)) & 0xff for i in range(9*1024*1024))`
    static let pattern9MiB: [UInt8] = (0..<(9 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 12)) }
}
