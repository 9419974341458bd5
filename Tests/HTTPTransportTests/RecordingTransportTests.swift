import HTTPTransport
import Testing
import TestSupport

/// The test double records requests and replays its script in order, per instance.
@Suite struct RecordingTransportTests {
    @Test func repliesInOrderThenFailsWhenTheScriptRunsOut() async throws {
        let transport = RecordingTransport([
            .response(TransportResponse(status: 200, body: Array("one".utf8))),
            .failure(TransportError(.timeout, "scripted")),
        ])
        let first = try await transport.send(TransportRequest(method: "GET", url: "http://a/1"))
        #expect(first.text == "one")
        let second = await transportError { _ = try await transport.send(TransportRequest(method: "POST", url: "http://a/2")) }
        #expect(second == TransportError(.timeout, "scripted"))
        let third = await transportError { _ = try await transport.send(TransportRequest(method: "GET", url: "http://a/3")) }
        #expect(third?.kind == .other)
        #expect(transport.requests.map(\.url) == ["http://a/1", "http://a/2", "http://a/3"])
        #expect(transport.remainingReplies == 0)
    }

    @Test func reportsTheWholeBodyAsSent() async throws {
        let transport = RecordingTransport([.response(TransportResponse(status: 200))])
        let sent = Locked<[Int64]>([])
        _ = try await transport.send(TransportRequest(
            method: "PUT", url: "http://a/", body: .bytes([1, 2, 3]), progress: { bytes in sent.update { $0.append(bytes) } }
        ))
        #expect(sent.value == [3])
    }
}

/// Header lookup on responses built by hand (as doubles build them).
@Suite struct TransportResponseTests {
    @Test func headerLookupIgnoresASCIICaseOnly() {
        let response = TransportResponse(status: 200, headers: [("Content-Type", "a"), ("X-Reqid", "r1"), ("x-reqid", "r2")])
        #expect(response[header: "content-type"] == "a")
        #expect(response.values(for: "X-REQID") == ["r1", "r2"])
        #expect(response[header: "Content-Typ"] == nil)
        #expect(response[header: "Content_Type"] == nil)
        #expect(response[header: ""] == nil)
    }
}
