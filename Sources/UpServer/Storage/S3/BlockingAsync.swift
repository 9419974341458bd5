import Dispatch
import Synchronization

/// Runs async work to its end from a synchronous caller, blocking the caller's thread meanwhile:
/// how `S3BlockStore` offers `BlockStore`'s synchronous calls over the async `S3Client`.
///
/// Only for callers on a thread of their own (`BlockingWork`): the work itself runs on the Swift
/// cooperative pool, which a blocked pool thread would starve.
enum BlockingAsync {
    static func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
