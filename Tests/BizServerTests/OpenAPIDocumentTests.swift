import BizServer
import Foundation
import HTTPKit
import Testing

/// Keeps `Config/openapi/biz-server.json` true: every route is documented, every documented
/// operation exists, and the documented statuses include what the handlers actually answer.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static var document: [String: Any] {
        let url = SDKConformanceTests.root.appending(path: "Config/openapi/biz-server.json")
        let data = (try? Data(contentsOf: url)) ?? Data()
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    static var documentedOperations: Set<String> {
        let paths = document["paths"] as? [String: [String: Any]] ?? [:]
        return Set(paths.flatMap { path, operations in operations.keys.map { "\($0.uppercased()) \(path)" } })
    }

    @Test func isOpenAPI3() {
        #expect((Self.document["openapi"] as? String)?.hasPrefix("3.") == true)
    }

    @Test func documentsExactlyTheRoutesTheServerHas() {
        let harness = BizServerHarness()
        let routed = Set(harness.server.router.routes.map { route in
            let path = route.pattern.description.split(separator: "/", omittingEmptySubsequences: false)
                .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "\(route.method.rawValue) \(path)"
        })
        #expect(routed == Self.documentedOperations)
    }

    @Test(arguments: [
        ("POST /v1/uptoken", ["200", "400", "401", "403", "413", "429"]),
        ("POST /v1/callback", ["200", "400", "401", "413", "503"]),
        ("GET /v1/uploads", ["200", "400", "401", "503"]),
        ("GET /v1/uploads/{id}", ["200", "401", "404"]),
        ("GET /healthz", ["200", "503"]),
    ])
    func documentsTheStatusesHandlersAnswer(operation: String, statuses: [String]) throws {
        let parts = operation.split(separator: " ")
        let paths = try #require(Self.document["paths"] as? [String: [String: Any]])
        let entry = try #require(paths[String(parts[1])]?[parts[0].lowercased()] as? [String: Any])
        let documented = Set((entry["responses"] as? [String: Any] ?? [:]).keys)
        for status in statuses { #expect(documented.contains(status), "\(operation) lacks \(status)") }
    }
}
