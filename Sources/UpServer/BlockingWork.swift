import NativeOS

/// up-server's name for NativeOS's one blocking-work executor: blocking file work (reads,
/// writes, fsync, removals) runs on ``BlockingExecutor/shared`` instead of the Swift cooperative
/// pool, which has one thread per core: a handler waiting on the disk there would stall every
/// other request on that thread.
enum BlockingWork {
    /// Runs `work` off the cooperative pool and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await BlockingExecutor.shared.run(work)
    }

    /// Starts `work` off the cooperative pool and returns at once (``BlockingJob``).
    static func start<T: Sendable>(_ work: @escaping @Sendable () throws -> T) -> BlockingJob<T> {
        BlockingExecutor.shared.start(work)
    }
}
