import Basics
import HTTPKit
import NativeCrypto
import Outbox
import ServerShell
import UpCore

/// The composition of up-server's routes: builds each controller with only the stores and
/// services it uses, and registers all of them through one `UpRouter` (so every route runs inside
/// the error boundary).
struct UpRoutes {
    let configuration: UpServerConfiguration
    let stores: UpStores
    let outbox: CallbackOutbox
    let sweeper: SweeperTask
    let hashes: BlockHashCache
    let writers: BlobWriteLocks
    let contexts: BlockContexts
    let clock: any WallClock
    let metrics: UpMetrics
    let logger: Logger

    /// Every route of the server.
    func router() -> Router {
        var macs: [String: HMACSHA1] = [:]
        for (accessKey, secretKey) in configuration.keys { macs[accessKey] = HMACSHA1(key: Array(secretKey.utf8)) }
        let authorizer = UploadAuthorizer(keys: KeyRing(macs: macs), buckets: Set(configuration.buckets))
        let management = ManagementAuthenticator(keys: KeyRing(configuration.keys))
        let committer = ObjectCommitter(
            objects: stores.objects, blobs: stores.blobs, callbacks: outbox, scheme: configuration.callback.scheme,
            clock: clock, metrics: metrics, logger: logger)
        let ingest = BlobIngest(store: stores.blobs, hashes: hashes, syncEveryChunk: configuration.syncEveryChunk)
        let blockRunner = BlockUploadRunner(
            blocks: stores.blocks, ingest: ingest, contexts: contexts, metrics: metrics, logger: logger)
        var router = UpRouter()
        FormUploadController(
            authorizer: authorizer, ingest: ingest, objects: stores.objects, committer: committer, clock: clock,
            metrics: metrics
        ).register(on: &router)
        let manager = ObjectManager(
            objects: stores.objects, catalog: stores.catalog, blobs: stores.blobs, buckets: Set(configuration.buckets),
            clock: clock, logger: logger)
        ManagementController(manager: manager, blobs: stores.blobs, authenticator: management, clock: clock)
            .register(on: &router)
        ListController(
            catalog: stores.catalog, authenticator: management, buckets: Set(configuration.buckets), clock: clock
        ).register(on: &router)
        DownloadController(
            manager: manager, blobs: stores.blobs, keys: KeyRing(configuration.keys),
            publicBuckets: Set(configuration.publicBuckets), publicBaseURL: configuration.publicBaseURL, clock: clock
        ).register(on: &router)
        OutboxAdminController(outbox: stores.outbox, authenticator: management, clock: clock).register(on: &router)
        SweepAdminController(sweeper: sweeper, authenticator: management, clock: clock).register(on: &router)
        BlocksController(
            mkblk: MkblkHandler(authorizer: authorizer, runner: blockRunner, clock: clock),
            bput: BputHandler(authorizer: authorizer, runner: blockRunner, writers: writers, clock: clock),
            mkfile: MkfileHandler(
                authorizer: authorizer, blocks: stores.blocks, blobs: stores.blobs, objects: stores.objects,
                contexts: contexts, committer: committer, clock: clock)
        ).register(on: &router)
        PutController(
            put: PutHandler(
                authorizer: authorizer, ingest: ingest, objects: stores.objects, committer: committer, clock: clock,
                metrics: metrics, logger: logger)
        ).register(on: &router)
        MultipartController(
            authorizer: authorizer, uploads: stores.uploads, ingest: ingest, committer: committer,
            lifetimeSeconds: configuration.multipartLifetimeSeconds, clock: clock, metrics: metrics, logger: logger
        ).register(on: &router)
        var routes = router.router
        let outbox = stores.outbox
        let metrics = self.metrics
        // `/healthz` and `/metrics`, the shell's (the same on both servers): the outbox depth is
        // the index's health check and a gauge refreshed at each scrape.
        OperationsRoutes(
            check: { metrics.outboxDepth.set(Double(try await outbox.depth())) },
            unavailable: UpError.Code.indexUnavailable.message, registry: metrics.registry,
            refresh: { if let depth = try? await outbox.depth() { metrics.outboxDepth.set(Double(depth)) } }
        ).register(on: &routes)
        routes.use(CORSMiddleware(configuration.cors, paths: Self.browserPaths))
        return routes
    }

    /// The routes a web page may call (issue 13 §3): form upload, `put`, v1 blocks, v2 multipart
    /// and downloads (`/download`, signed `/dl`); never management (`/stat`), the admin API (`/admin/outbox`, `/admin/sweep`) or operations.
    static let browserPaths = [
        "/", "/put/*", "/putb64/*", "/mkblk/*", "/bput/*", "/mkfile/*", "/rs-mkfile/*", "/buckets/*", "/download/*", "/dl/*",
    ]
}
