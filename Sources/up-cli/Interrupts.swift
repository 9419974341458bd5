import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT count, touched by the signal handler (an atomic add is async-signal-safe).
private let interruptCount = Atomic<Int>(0)

/// Ctrl-C handling for `put`: the first SIGINT is reported to a task (which pauses the upload);
/// the second ends the process at once with status 130.
///
/// The handler only counts (and `_exit`s on the second): no locks or allocation in signal
/// context. A task polls the count every 50 ms and runs the pause outside the handler.
/// (`SIG_IGN` plus a dispatch signal source is what the servers do, but `SIG_IGN` is a C
/// function-pointer constant a memory-safe module may not use, and with several threads the
/// kernel may deliver the signal to one that has not blocked it.)
enum Interrupts {
    /// Installs the handler and calls `onFirst` (once) when the first Ctrl-C arrives.
    /// Returns the polling task; cancel it when the upload is over.
    static func install(onFirst: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        _ = interruptCount.load(ordering: .relaxed)  // initialise the global outside signal context
        _ = signal(SIGINT) { _ in
            if interruptCount.add(1, ordering: .sequentiallyConsistent).newValue >= 2 { _exit(130) }
        }
        return Task.detached {
            while !Task.isCancelled {
                if interruptCount.load(ordering: .sequentiallyConsistent) >= 1 {
                    onFirst()
                    return
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Whether Ctrl-C was pressed.
    static var interrupted: Bool { interruptCount.load(ordering: .sequentiallyConsistent) >= 1 }
}
