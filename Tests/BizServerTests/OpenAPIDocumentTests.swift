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

    @Test func theRoutesAreTheSameWithEndUsersConfigured() async throws {
        let fixture = try await JWTFixture.load()
        let plain = BizServerHarness().server.router.routes.map { "\($0.method.rawValue) \($0.pattern.description)" }
        let withJWT = BizServerHarness(jwt: try fixture.configuration()).server.router.routes
            .map { "\($0.method.rawValue) \($0.pattern.description)" }
        #expect(plain == withJWT)
    }

    static func operation(_ method: String, _ path: String) throws -> [String: Any] {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return try #require(paths[path]?[method] as? [String: Any])
    }

    @Test func theUploadsQueryParametersAreExactlyTheOnesTheHandlerTakes() async throws {
        let documented = (try Self.operation("get", "/v1/uploads")["parameters"] as? [[String: Any]] ?? [])
            .compactMap { $0["name"] as? String }
        #expect(Set(documented) == ["limit", "after", "key", "traceId", "endUser"])
        let harness = BizServerHarness()
        for name in documented + ["undocumented"] {
            let value = name == "limit" ? "1" : "x"
            let response = await harness.send(
                .get, "/v1/uploads?\(name)=\(value)", headers: ["Authorization": "Bearer \(BizServerHarness.demoKey)"])
            let unknown = response.errorText == "unknown query parameter '\(name)'"
            #expect(unknown == (name == "undocumented"), "\(name): \(response.status) \(response.text)")
        }
    }

    @Test func theTokenRequestSchemaListsEveryMemberTheHandlerTakes() async throws {
        let schemas = try #require((Self.document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let properties = try #require((schemas["TokenRequest"] as? [String: Any])?["properties"] as? [String: Any])
        let harness = BizServerHarness()
        for name in properties.keys.sorted() + ["undocumented"] {
            let response = await harness.token("{\"\(name)\":null}")
            let unknown = response.errorText == "unknown member '\(name)'"
            #expect(unknown == (name == "undocumented"), "\(name): \(response.status) \(response.text)")
        }
        let security = try Self.operation("post", "/v1/uptoken")["security"] as? [[String: Any]] ?? []
        #expect(Set(security.flatMap(\.keys)) == ["apiKey", "endUserJWT"])
    }

    @Test func theKeyCreationSchemaListsEveryMemberTheHandlerTakes() async throws {
        let schemas = try #require((Self.document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let properties = try #require((schemas["KeyCreationRequest"] as? [String: Any])?["properties"] as? [String: Any])
        #expect(Set(properties.keys) == ["client", "name", "expires"])
        let harness = BizServerHarness()
        for name in properties.keys.sorted() + ["undocumented"] {
            let response = await harness.admin(.post, "/v1/admin/keys", body: "{\"client\":\"demo\",\"\(name)\":null}")
            let unknown = response.errorText == "unknown member '\(name)'"
            #expect(unknown == (name == "undocumented"), "\(name): \(response.status) \(response.text)")
        }
        let documented = (try Self.operation("get", "/v1/admin/keys")["parameters"] as? [[String: Any]] ?? [])
            .compactMap { $0["name"] as? String }
        for name in documented + ["undocumented"] {
            let response = await harness.admin(.get, "/v1/admin/keys?\(name)=x")
            let unknown = response.errorText == "unknown query parameter '\(name)'"
            #expect(unknown == (name == "undocumented"), "\(name): \(response.status) \(response.text)")
        }
    }

    @Test func everyAdminOperationNeedsTheAdminTokenAndNothingElseDoes() throws {
        let paths = try #require(Self.document["paths"] as? [String: [String: Any]])
        for (path, operations) in paths {
            for (method, value) in operations {
                let security = ((value as? [String: Any])?["security"] as? [[String: Any]] ?? []).flatMap(\.keys)
                #expect(security.contains("adminToken") == path.hasPrefix("/v1/admin/"), "\(method) \(path): \(security)")
                if path.hasPrefix("/v1/admin/") { #expect(security == ["adminToken"], "\(method) \(path)") }
            }
        }
    }

    /// The keys the admin API answers with are exactly the documented schemas' members.
    @Test func createdAndListedKeysHaveTheDocumentedMembers() async throws {
        let schemas = try #require((Self.document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        func members(_ name: String) throws -> Set<String> {
            Set(try #require((schemas[name] as? [String: Any])?["properties"] as? [String: Any]).keys)
        }
        let harness = BizServerHarness()
        let created = try await harness.admin(.post, "/v1/admin/keys", body: #"{"client":"demo"}"#).jsonObject()
        #expect(Set(created.keys) == (try members("CreatedKey")))
        let listed = try await harness.admin(.get, "/v1/admin/keys").jsonObject()
        #expect(Set(listed.keys) == (try members("KeyList")))
        for item in try #require(listed["items"] as? [[String: Any]]) {
            #expect(Set(item.keys) == (try members("KeyInfo")))
        }
    }

    @Test(arguments: [
        ("POST /v1/uptoken", ["200", "400", "401", "403", "413", "429", "503"]),
        ("POST /v1/callback", ["200", "400", "401", "413", "503"]),
        ("GET /v1/uploads", ["200", "400", "401", "503"]),
        ("GET /v1/uploads/{id}", ["200", "401", "404"]),
        ("GET /healthz", ["200", "503"]),
        ("GET /v1/admin/keys", ["200", "400", "401", "429", "503"]),
        ("POST /v1/admin/keys", ["201", "400", "401", "413", "429", "503"]),
        ("DELETE /v1/admin/keys/{id}", ["200", "401", "404", "409", "429", "503"]),
    ])
    func documentsTheStatusesHandlersAnswer(operation: String, statuses: [String]) throws {
        let parts = operation.split(separator: " ")
        let paths = try #require(Self.document["paths"] as? [String: [String: Any]])
        let entry = try #require(paths[String(parts[1])]?[parts[0].lowercased()] as? [String: Any])
        let documented = Set((entry["responses"] as? [String: Any] ?? [:]).keys)
        for status in statuses { #expect(documented.contains(status), "\(operation) lacks \(status)") }
    }
}
