import Basics
import Foundation
import HTTPKit
import NativeCrypto
import Synchronization
import TestSupport
import UpCore
@testable import UpServer

/// An up-server over an in-memory index and block store, a manual clock and scripted callbacks,
/// driven in-process through its router. Tokens are minted with the test AK/SK.
struct UpServerHarness {
    static let accessKey = "test-ak"
    static let secretKey = "test-sk"
    static let bucket = "demo"

    let server: UpServer
    let index: InMemoryUpIndex
    /// The in-memory blob store, which the server writes to unless the harness was made over
    /// another store (``init(blobs:)``).
    let store: InMemoryBlockStore
    /// The blob store the server writes to.
    let blobs: any BlockStore
    let clock: ManualClock
    let callbacks: ScriptedCallbacks
    let logs = LogSink.memory()
    let mac = HMACSHA1(key: Array(secretKey.utf8))

    init(_ configure: (inout UpServerConfiguration) -> Void = { _ in }) {
        let clock = ManualClock(1_900_000_000)
        self.init(
            configure, index: InMemoryUpIndex(), store: InMemoryBlockStore(clock: clock), clock: clock,
            callbacks: ScriptedCallbacks())
    }

    /// An up-server whose blobs go to `blobs` (S3 on SeaweedFS), the rest as ``init(_:)``.
    init(blobs: any BlockStore) {
        let clock = ManualClock(1_900_000_000)
        self.init(
            index: InMemoryUpIndex(), store: InMemoryBlockStore(clock: clock), blobs: blobs, clock: clock,
            callbacks: ScriptedCallbacks())
    }

    /// A second up-server instance beside `node`: the same index, blob store, clock and callback
    /// script (one deployment behind a proxy), its own process state (write locks, caches).
    init(sharingWith node: UpServerHarness) {
        self.init(index: node.index, store: node.store, blobs: node.blobs, clock: node.clock, callbacks: node.callbacks)
    }

    private init(
        _ configure: (inout UpServerConfiguration) -> Void = { _ in }, index: InMemoryUpIndex, store: InMemoryBlockStore,
        blobs: (any BlockStore)? = nil, clock: ManualClock, callbacks: ScriptedCallbacks
    ) {
        var configuration = UpServerConfiguration(
            port: 9000, keys: [Self.accessKey: Self.secretKey], buckets: [Self.bucket, "other"],
            contextSecret: "test-context-secret-0123456789")
        configure(&configuration)
        self.index = index
        self.clock = clock
        self.store = store
        self.blobs = blobs ?? store
        self.callbacks = callbacks
        server = UpServer(
            configuration: configuration, stores: UpStores(blobs: self.blobs, index: index, outbox: index.outbox),
            callbacks: callbacks,
            contextSecret: Array((configuration.contextSecret ?? "").utf8), clock: clock,
            logger: Logger(label: "up-test", sink: logs), metrics: Metrics())
    }

    /// Now, whole seconds.
    var now: Int64 { Int64(clock.now()) }

    /// A signed upload token for `policy` (deadline defaults to an hour from now).
    func token(_ policy: PutPolicy) -> String {
        UpToken.sign(policy, accessKey: Self.accessKey, mac: mac)
    }

    /// A token for `scope` with the rest of the policy set by `configure`.
    func token(scope: String = bucket, lifetime: Int64 = 3600, _ configure: (inout PutPolicy) -> Void = { _ in }) -> String {
        var policy = PutPolicy(scope: scope, deadline: now + lifetime)
        configure(&policy)
        return token(policy)
    }

    /// Sends one request through the router.
    func send(_ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:], body: [UInt8] = []) async -> Response {
        await send(Request(method: method, target: target, headers: headers, body: body))
    }

    /// Sends `request` through the router (one whose body is a stream the test feeds).
    func send(_ request: Request) async -> Response {
        await server.router.respond(to: request, logger: Logger(label: "up-test", sink: logs))
    }

    /// `Authorization: UpToken <token>`.
    static func auth(_ token: String) -> HTTPHeaders { ["Authorization": "UpToken \(token)"] }
}

/// A callback deliverer that records what it was asked to send and answers from a script
/// (default: delivered `{"ok":true}`).
final class ScriptedCallbacks: CallbackDelivering {
    private let state = Mutex<(sent: [CallbackRequest], script: [CallbackOutcome])>(([], []))
    /// Where each delivery waits, once counted as sent, before it answers (none: it answers at once).
    private let gate: Gate?

    /// Callbacks that answer at once, or only once `gate` opens.
    init(holdingAt gate: Gate? = nil) {
        self.gate = gate
    }

    /// Queues outcomes for the next deliveries, in order.
    func script(_ outcomes: CallbackOutcome...) { state.withLock { $0.script += outcomes } }

    /// Entries delivered so far.
    var sent: [CallbackRequest] { state.withLock { $0.sent } }

    func deliver(_ entry: CallbackRequest) async -> CallbackOutcome {
        let outcome = state.withLock { state in
            state.sent.append(entry)
            return state.script.isEmpty ? .delivered(reply: Array(#"{"ok":true}"#.utf8)) : state.script.removeFirst()
        }
        await gate?.pass()
        return outcome
    }
}

extension Response {
    /// The body as text.
    var text: String { String(decoding: bodyBytes, as: UTF8.self) }

    /// The body as a JSON object (empty when it is not one).
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(bodyBytes)) as? [String: Any]) ?? [:] }

    /// The `error` member of a JSON error body.
    var errorText: String? { json["error"] as? String }
}
