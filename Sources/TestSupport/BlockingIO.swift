internal import Foundation

/// Runs blocking work (sockets in tests) on its own thread and awaits the result, so the
/// cooperative pool — which the server's handlers run on — is never starved by waiting clients.
public enum BlockingIO {
    /// Runs `work` on a new thread.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try work() })
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }
}
