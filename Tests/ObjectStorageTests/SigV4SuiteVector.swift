import Foundation
import ObjectStorage
import Testing

/// One case of AWS's Signature Version 4 test suite (`Vectors/aws-sig-v4-test-suite`, see its
/// README for the source and the cases left out), parsed from its `.req` file.
struct SigV4SuiteVector: Sendable, CustomTestStringConvertible {
    static let credentials = S3Credentials(
        accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let signer = SigV4Signer(credentials: credentials, region: "us-east-1", service: "service")

    let name: String
    let method: String
    /// The path as the `.req` writes it (raw UTF-8, not encoded).
    let path: String
    let query: [(name: String, value: String)]
    let headers: [(name: String, value: String)]
    let body: [UInt8]
    let canonicalRequest: String
    let stringToSign: String
    let authorization: String

    var testDescription: String { name }

    static let directory: URL = {
        guard let url = Bundle.module.url(forResource: "Vectors", withExtension: nil) else {
            fatalError("Vectors/ missing from the test bundle")
        }
        return url.appending(path: "aws-sig-v4-test-suite")
    }()

    static let all: [SigV4SuiteVector] = {
        let entries = (try? FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: [.isDirectoryKey])) ?? []
        return entries.filter(\.hasDirectoryPath).map(\.lastPathComponent).sorted().map(load)
    }()

    static func load(_ name: String) -> SigV4SuiteVector {
        func read(_ suffix: String) -> String {
            let url = directory.appending(path: "\(name)/\(name).\(suffix)")
            guard let text = try? String(contentsOf: url, encoding: .utf8) else { fatalError("\(url.path) unreadable") }
            return text
        }
        let request = read("req")
        let (head, body) = split(request)
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let requestLine = lines.removeFirst().split(separator: " ")
        let target = String(requestLine[1])
        let path = String(target.prefix { $0 != "?" })
        let queryText = target.contains("?") ? String(target.drop { $0 != "?" }.dropFirst()) : ""
        let query = queryText.split(separator: "&").map { pair in
            let name = pair.prefix { $0 != "=" }
            return (name: String(name), value: String(pair.dropFirst(name.count + 1)))
        }
        // A line starting with spaces continues the previous field: the suite signs each folded
        // line as another value of that field (get-header-value-multiline).
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if line.first == " ", let last = headers.last {
                headers.append((last.name, line))
            } else if let colon = line.firstIndex(of: ":") {
                headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
            }
        }
        return SigV4SuiteVector(
            name: name, method: String(requestLine[0]), path: path, query: query, headers: headers,
            body: Array(body.utf8), canonicalRequest: read("creq"), stringToSign: read("sts"), authorization: read("authz"))
    }

    /// The head and body of a `.req`: they are separated by the first empty line.
    private static func split(_ request: String) -> (head: String, body: String) {
        guard let range = request.range(of: "\n\n") else { return (request, "") }
        return (String(request[..<range.lowerBound]), String(request[range.upperBound...]))
    }
}
