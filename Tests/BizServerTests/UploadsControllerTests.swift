import Basics
import BizServer
import Foundation
import HTTPKit
import TestSupport
import Testing
import UpCore

@Suite("GET /v1/uploads")
struct UploadsControllerTests {
    /// Records `count` uploads for client demo and one for client other, a second apart.
    static func seeded(_ count: Int) async throws -> BizServerHarness {
        let harness = BizServerHarness()
        for index in 0..<count {
            let fields = "endUser=\(index % 2 == 0 ? "even" : "odd")&traceId=trace-\(index % 3)"
            let body = Array("bucket=demo&key=demo%2F\(index)&hash=H\(index)&fsize=\(index)&clientId=demo&\(fields)".utf8)
            let response = await harness.postQBox(target: "/v1/callback", body: body, contentType: QBoxSignature.formContentType)
            #expect(response.status == 200)
            harness.clock.advance(by: 1)
        }
        let other = Array("bucket=demo&key=other%2Fx&hash=HX&fsize=1&clientId=other".utf8)
        #expect(await harness.postQBox(target: "/v1/callback", body: other, contentType: QBoxSignature.formContentType).status == 200)
        return harness
    }

    func list(_ harness: BizServerHarness, _ query: String, apiKey: String = BizServerHarness.demoKey) async -> Response {
        await harness.send(.get, "/v1/uploads" + query, headers: ["Authorization": "Bearer \(apiKey)"])
    }

    @Test func pagesThroughTheClientsOwnUploadsNewestFirst() async throws {
        let harness = try await Self.seeded(5)
        var keys: [String] = []
        var after = ""
        for _ in 0..<3 {
            let page = try await list(harness, "?limit=2" + (after.isEmpty ? "" : "&after=\(after)")).jsonObject()
            let items = try #require(page["items"] as? [[String: Any]])
            keys += items.compactMap { $0["key"] as? String }
            guard let next = page["next"] as? String else { break }
            after = next
        }
        #expect(keys == ["demo/4", "demo/3", "demo/2", "demo/1", "demo/0"])
    }

    @Test func theLastPageHasNoNext() async throws {
        let harness = try await Self.seeded(2)
        let page = try await list(harness, "?limit=2").jsonObject()
        #expect((page["items"] as? [Any])?.count == 2)
        #expect(page["next"] is NSNull)
    }

    @Test func aClientNeverSeesAnotherClientsUploads() async throws {
        let harness = try await Self.seeded(3)
        let page = try await list(harness, "", apiKey: BizServerHarness.otherKey).jsonObject()
        let items = try #require(page["items"] as? [[String: Any]])
        #expect(items.map { $0["key"] as? String } == ["other/x"])

        let demoID = try #require((try await list(harness, "?limit=1").jsonObject()["items"] as? [[String: Any]])?.first?["id"] as? String)
        let own = await harness.send(.get, "/v1/uploads/\(demoID)", headers: ["Authorization": "Bearer demo-api-key"])
        #expect(own.status == 200)
        #expect(try own.jsonObject()["key"] as? String == "demo/2")
        let foreign = await harness.send(.get, "/v1/uploads/\(demoID)", headers: ["Authorization": "Bearer other-api-key"])
        #expect(foreign.status == 404)
        #expect(foreign.errorText == "no such upload")
    }

    @Test(arguments: ["?limit=0", "?limit=1001", "?limit=x", "?limit="])
    func badLimitsAre400(query: String) async throws {
        let harness = BizServerHarness()
        let response = await list(harness, query)
        #expect(response.status == 400)
        #expect(response.errorText == "limit must be an integer 1…1000")
    }

    func keys(_ harness: BizServerHarness, _ query: String) async throws -> [String] {
        let response = await list(harness, query)
        let page = try response.jsonObject()
        let items = try #require(page["items"] as? [[String: Any]], "\(response.status) \(response.text)")
        return items.compactMap { $0["key"] as? String }
    }

    // Issue 10 item 14: `?after=bogus` answered 200 with an empty page.
    @Test(arguments: ["?after=bogus", "?after=up_00000000000000000000000000", "?after=OTHER", "?limit=1&after=up_x"])
    func aCursorThatIsNotOneOfTheClientsUploadsIs400(query: String) async throws {
        let harness = try await Self.seeded(2)
        let otherID = try #require(
            (try await list(harness, "", apiKey: BizServerHarness.otherKey).jsonObject()["items"] as? [[String: Any]])?
                .first?["id"] as? String)
        let response = await list(harness, query.replacingOccurrences(of: "OTHER", with: otherID))
        #expect(response.status == 400, "\(response.text)")
        #expect(response.errorText == "after must be the next of an earlier page of your uploads")
    }

    @Test func filtersByKeyTraceIDAndEndUserCombineWithTheCursorAndLimit() async throws {
        let harness = try await Self.seeded(6)
        #expect(try await keys(harness, "?key=demo%2F3") == ["demo/3"])
        #expect(try await keys(harness, "?key=demo%2F") == [])
        #expect(try await keys(harness, "?endUser=odd") == ["demo/5", "demo/3", "demo/1"])
        #expect(try await keys(harness, "?traceId=trace-0") == ["demo/3", "demo/0"])
        #expect(try await keys(harness, "?traceId=trace-1&endUser=odd") == ["demo/1"])
        let first = try await list(harness, "?endUser=even&limit=1").jsonObject()
        let next = try #require(first["next"] as? String)
        #expect(try await keys(harness, "?endUser=even&limit=1&after=\(next)") == ["demo/2"])
        // Another client's uploads never match a filter.
        #expect(try await keys(harness, "?key=other%2Fx") == [])
    }

    @Test(arguments: [
        ("?kye=demo%2F1", "unknown query parameter 'kye'"),
        ("?key=", "key must be 1…750 bytes without NUL"),
        ("?key=a%00b", "key must be 1…750 bytes without NUL"),
        ("?endUser=", "endUser must be 1…1024 bytes without NUL"),
        ("?traceId=", "traceId must be 1…64 bytes without NUL"),
        ("?key=a&key=b", "query parameter 'key' given twice"),
        ("?limit=2&limit=3", "query parameter 'limit' given twice"),
    ])
    func badFiltersAre400(query: String, error: String) async throws {
        let harness = BizServerHarness()
        let response = await list(harness, query)
        #expect(response.status == 400)
        #expect(response.errorText == error)
    }

    @Test func listingNeedsAnAPIKey() async {
        let harness = BizServerHarness()
        #expect(await harness.send(.get, "/v1/uploads").status == 401)
        #expect(await harness.send(.get, "/v1/uploads/up_x").status == 401)
    }

    @Test func unknownIDsAre404() async {
        let harness = BizServerHarness()
        let response = await harness.send(.get, "/v1/uploads/up_nope", headers: ["Authorization": "Bearer demo-api-key"])
        #expect(response.status == 404)
    }
}
