import NativeOS
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SIGINT count since `install`.
private let interruptCount = Atomic<Int>(0)

/// Ctrl-C handling for `put`: the first SIGINT is reported to `onFirst` (which pauses the
/// upload); the second ends the process at once with status 130.
///
/// NativeOS delivers the signal in thread context as it arrives (its handler only writes to a
/// pipe that a thread blocks on), so nothing polls and nothing runs in signal context here.
enum Interrupts {
    /// Starts watching for Ctrl-C and calls `onFirst` (once) when the first one arrives.
    /// Cancel the returned watch when the upload is over.
    static func install(onFirst: @escaping @Sendable () -> Void) -> Watch {
        Watch(observation: ProcessSignals.observe([.interrupt]) { _ in
            if interruptCount.add(1, ordering: .sequentiallyConsistent).newValue >= 2 { _exit(130) }
            onFirst()
        })
    }

    /// A running watch for Ctrl-C.
    struct Watch {
        let observation: SignalObservation

        /// Stops watching: Ctrl-C has its default effect again.
        func cancel() { observation.cancel() }
    }

    /// Whether Ctrl-C was pressed.
    static var interrupted: Bool { interruptCount.load(ordering: .sequentiallyConsistent) >= 1 }
}
